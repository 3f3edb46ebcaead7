-- A table in a character set other than the server's (greek), holding text that
-- exists only in that set: backup, prepare and restore must keep it byte for byte.
SET NAMES utf8;
CREATE TABLE `messages` (
  `a` varchar(40) DEFAULT NULL
) ENGINE=InnoDB DEFAULT CHARSET=greek;
INSERT INTO `messages` VALUES ('καλημέρα'), ('ευχαριστώ πολύ'), ('Αθήνα, Θεσσαλονίκη');
