"""kewpie 2012's ``lib.util.mailing_report``: mail a test's report.

``sendMail(mail_executor, to_address, message)`` (and 2012's other name for
it, ``kewpieSendMail``) sends message to to_address (one address or a list)
and logs through ``mail_executor.logging`` (a ``test_executor``), as 2012
did.  2012 logged into one hard-coded mail account; here the mail server
is the environment's:

- ``KEWPIE_SMTP=host[:port]`` (port 25 by default) sends it there, from
  ``KEWPIE_MAIL_FROM`` (default ``kewpie@<this host>``), with the subject
  ``kewpie report``;
- without ``KEWPIE_SMTP`` nothing is sent: the mail is appended to
  ``mail_report.txt`` in the executor's log directory, and one line says
  where it is and how to send it.

Returns the file written, or '' when the mail was sent.
"""
from __future__ import annotations

import os
import smtplib
import socket
import time
from email.message import EmailMessage
from typing import Any, Sequence

SMTP_ENV = "KEWPIE_SMTP"
FROM_ENV = "KEWPIE_MAIL_FROM"
MAIL_FILE = "mail_report.txt"
SMTP_TIMEOUT = 30.0


def recipients(to_address: str | Sequence[str]) -> list[str]:
    """to_address as a list of addresses ('a@x, b@y' is two)."""
    if isinstance(to_address, str):
        return [a.strip() for a in to_address.split(",") if a.strip()]
    return [str(a) for a in to_address]


def compose(to_address: str | Sequence[str], message: str, sender: str) -> EmailMessage:
    """The mail: subject ``kewpie report``, message as its body."""
    mail = EmailMessage()
    mail["Subject"] = "kewpie report"
    mail["From"] = sender
    mail["To"] = ", ".join(recipients(to_address))
    mail.set_content(message)
    return mail


def smtp_server(value: str) -> tuple[str, int]:
    """(host, port) of ``host[:port]``."""
    host, _, port = value.rpartition(":") if ":" in value else (value, "", "25")
    return host, int(port or 25)


def sendMail(mail_executor: Any, to_address: str | Sequence[str], message: str) -> str:  # noqa: N802
    """Send the report, or keep it in the log directory (see the module docstring)."""
    logging = getattr(mail_executor, "logging", None)
    sender = os.environ.get(FROM_ENV) or f"kewpie@{socket.gethostname()}"
    mail = compose(to_address, str(message), sender)
    server = os.environ.get(SMTP_ENV, "")
    if server:
        host, port = smtp_server(server)
        if logging is not None:
            logging.info(f"Mailing report to {mail['To']} through {host}:{port}...")
        with smtplib.SMTP(host, port, timeout=SMTP_TIMEOUT) as smtp:
            smtp.send_message(mail)
        if logging is not None:
            logging.info("Report successfully sent...")
        return ""
    log_dir = getattr(mail_executor, "logdir", None) or os.getcwd()
    path = os.path.join(log_dir, MAIL_FILE)
    with open(path, "a") as fh:
        fh.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')}\nFrom: {mail['From']}\n"
                 f"To: {mail['To']}\nSubject: {mail['Subject']}\n\n{message}\n")
    if logging is not None:
        logging.info(f"Report for {mail['To']} kept in {path} (set {SMTP_ENV}=host[:port] "
                     f"to mail it)")
    return path


def kewpieSendMail(mail_executor: Any, to_address: str | Sequence[str],  # noqa: N802
                   message: str) -> str:
    """2012's other name for :func:`sendMail`."""
    return sendMail(mail_executor, to_address, message)
