#!/usr/bin/perl
# kewpie's Perl coprocess for grammar blocks outside the native subset.
# One process per generator thread.  Protocol: one JSON object per line on
# stdin, one JSON reply per line on stdout (see lib/randgen/perl_coprocess.py).
# It offers the Perl tool's block environment: $prng (KwPrng), $generator,
# $executors->[0] (KwExecutor: the metadata API, and a DBI handle to the
# server when one is given), $stack, $last_table & co, List::Util, say().
use strict;
use warnings;
no warnings;
use JSON::PP;
use List::Util qw(shuffle first max min sum sum0 maxstr minstr reduce uniq any all none);
use POSIX ();
use Cwd ();
use Time::HiRes ();
use Data::Dumper ();

$| = 1;
my $json = JSON::PP->new->allow_nonref->allow_blessed->convert_blessed;

package KwPrng;
my %INT_RANGES = (
    tinyint => [-128, 127], tinyint_unsigned => [0, 255], tinyint_positive => [1, 255],
    smallint => [-32768, 32767], smallint_unsigned => [0, 65535], smallint_positive => [1, 65535],
    mediumint => [-8388608, 8388607], mediumint_unsigned => [0, 16777215],
    mediumint_positive => [1, 16777215],
    int => [-2147483648, 2147483647], int_unsigned => [0, 4294967295], int_positive => [1, 4294967295],
    integer => [-2147483648, 2147483647], integer_unsigned => [0, 4294967295],
    integer_positive => [1, 4294967295],
    bigint => [-9223372036854775808, 9223372036854775807], bigint_unsigned => [0, 18446744073709551615],
    bigint_positive => [1, 18446744073709551615], bool => [0, 1], boolean => [0, 1],
);
my %KIND = (
    digit => 'digit', letter => 'letter', float => 'float', double => 'float', decimal => 'float',
    char => 'string', varchar => 'string', string => 'string', binary => 'string',
    varbinary => 'string', text => 'text', tinytext => 'text', mediumtext => 'text',
    longtext => 'text', blob => 'text', tinyblob => 'text', mediumblob => 'text', longblob => 'text',
    date => 'date', year => 'year', time => 'time', datetime => 'datetime',
    timestamp => 'timestamp', enum => 'enum', set => 'set', null => 'null', ascii => 'ascii',
    empty => 'empty', hex => 'hex', quid => 'quid', bit => 'bit', english => 'dict',
    states => 'dict', places => 'dict', json => 'json', data => 'text',
);
$KIND{$_} = 'numeric' for qw(tinyint smallint mediumint int integer bigint bool boolean);

sub new { my ($class, $seed, $vlen, $words) = @_; srand($seed); return bless { vlen => $vlen || 1, words => $words || [], seed => $seed }, $class; }
sub seed { return $_[0]->{seed}; }
sub setSeed { my ($s, $seed) = @_; $s->{seed} = $seed; srand($seed); return undef; }
sub urand { return CORE::int(rand() * 4294967296); }
sub int { my ($s, $lo, $hi) = @_; $lo = 0 unless defined $lo; $hi = 65535 unless defined $hi; ($lo, $hi) = ($hi, $lo) if $hi < $lo; return $lo + CORE::int(rand() * ($hi - $lo + 1)); }
sub uint16 { return $_[0]->int($_[1], $_[2]); }
sub float { my ($s, $lo, $hi) = @_; $lo = 0 unless defined $lo; $hi = 1 unless defined $hi; return $lo + rand() * ($hi - $lo); }
sub digit { return CORE::int(rand() * 10); }
sub positive_digit { return 1 + CORE::int(rand() * 9); }
sub letter { return chr(97 + CORE::int(rand() * 26)); }
sub string { my ($s, $len) = @_; $len = $s->{vlen} unless defined $len; return '' if $len <= 0; my $n = $s->int(1, $len); return join('', map { chr(97 + CORE::int(rand() * 26)) } (1..$n)); }
sub ascii { my ($s, $len) = @_; $len = $s->{vlen} unless defined $len; return join('', map { chr(32 + CORE::int(rand() * 95)) } (1..$s->int(1, $len || 1))); }
sub arrayElement { my ($s, $a) = @_; return undef if !defined $a || ref $a ne 'ARRAY' || $#{$a} < 0; return $a->[CORE::int(rand() * scalar(@$a))]; }
sub shuffleArray { my ($s, $a) = @_; return $a unless ref $a eq 'ARRAY' && @$a > 1; for (my $i = @$a; --$i; ) { my $j = CORE::int(rand() * ($i + 1)); @$a[$i, $j] = @$a[$j, $i]; } return $a; }
sub date { my $s = shift; return sprintf('%04d-%02d-%02d', $s->int(1971, 2035), $s->int(1, 12), $s->int(1, 28)); }
sub year { return $_[0]->int(1971, 2035); }
sub time { my $s = shift; return sprintf('%02d:%02d:%02d.%06d', $s->int(0, 23), $s->int(0, 59), $s->int(0, 59), $s->int(0, 999999)); }
sub datetime { my $s = shift; return $s->date() . ' ' . $s->time(); }
sub timestamp { my $s = shift; my $d = $s->date(); $d =~ s/-//g; my $t = $s->time(); $t =~ s/://g; return $d . $t; }
sub hex { my ($s, $len) = @_; $len = 4 unless defined $len; return '0x' . join('', map { (0..9, 'A'..'F')[CORE::int(rand() * 16)] } (1..$s->int(1, $len))); }
sub quid { return join('', map { chr(65 + CORE::int(rand() * 26)) } (1..5)); }
sub bit { my ($s, $len) = @_; $len = 1 unless defined $len; return "b'" . join('', map { CORE::int(rand() * 2) } (1..$s->int(1, $len))) . "'"; }
sub enum { return chr(97 + CORE::int(rand() * 26)); }
sub set { my $s = shift; return join(',', map { $s->enum() } (1..$s->int(1, 3))); }
sub fromDictionary { my $s = shift; return $s->arrayElement($s->{words}); }
sub english { return $_[0]->fromDictionary('english'); }
sub text { my ($s, $n) = @_; $n = 10 unless defined $n && $n > 0; return join(' ', map { $s->english() } (1..$s->int(1, $n))); }
sub json { my $s = shift; return '{"' . $s->string(4) . '": ' . $s->int(0, 100) . '}'; }
sub file { return undef; }
sub isFieldType { my ($s, $def) = @_; return 0 unless defined $def; $def =~ s{ }{_}; $def =~ s{^_}{}; my ($base) = $def =~ m{^([A-Za-z]*)}; return exists $KIND{lc $base} ? 1 : 0; }
sub fieldType {
    my ($s, $def) = @_;
    return undef unless defined $def;
    $def =~ s{ }{_}; $def =~ s{^_}{};
    my ($base) = $def =~ m{^([A-Za-z]*)}; my ($full) = $def =~ m{^([A-Za-z_]*)};
    my ($len) = $def =~ m{\((.*?)\)};
    $base = lc $base; $full = lc $full; $full =~ s/_+$//;
    my $kind = $KIND{$base};
    return undef unless defined $kind;
    if ($kind eq 'digit') { return $s->digit(); }
    if ($kind eq 'letter') { return $s->letter(); }
    if ($kind eq 'numeric') { my $r = $INT_RANGES{$full} || $INT_RANGES{$base}; return $s->int(@$r); }
    if ($kind eq 'float') { return $s->float(-1000000, 1000000); }
    if ($kind eq 'string') { return $s->string(defined $len ? $len : undef); }
    if ($kind eq 'text') { return $s->text(defined $len ? CORE::int($len / 6) || 1 : 20); }
    if ($kind eq 'date') { return $s->date(); }
    if ($kind eq 'year') { return $s->year(); }
    if ($kind eq 'time') { return $s->time(); }
    if ($kind eq 'datetime') { return $s->datetime(); }
    if ($kind eq 'timestamp') { return $s->timestamp(); }
    if ($kind eq 'enum') { return $s->enum(); }
    if ($kind eq 'set') { return $s->set(); }
    if ($kind eq 'null') { return undef; }
    if ($kind eq 'ascii') { return $s->ascii($len); }
    if ($kind eq 'empty') { return ''; }
    if ($kind eq 'hex') { return $s->hex($len); }
    if ($kind eq 'quid') { return $s->quid(); }
    if ($kind eq 'bit') { return $s->bit($len); }
    if ($kind eq 'dict') { return $s->fromDictionary($base); }
    return $s->json();
}

package KwStackFrame;
sub new { return bless {}, shift; }
sub set { $_[0]->{$_[1]} = $_[2]; return undef; }
sub get { return $_[0]->{$_[1]}; }

package KwStack;
sub new { my $s = bless [0], shift; return $s; }
sub push { my $s = shift; my $arg; $arg = $s->get('arg') if $s->[0] > 0; $s->[0]++; $s->[$s->[0]] = KwStackFrame->new(); $s->set('arg', $arg) if defined $arg; return undef; }
sub set { my ($s, $k, $v) = @_; $s->[$s->[0]] = KwStackFrame->new() unless ref $s->[$s->[0]]; $s->[$s->[0]]->set($k, $v); return undef; }
sub get { my ($s, $k) = @_; return undef unless ref $s->[$s->[0]]; return $s->[$s->[0]]->get($k); }
sub pop { my ($s, $r) = @_; $s->[0]--; $s->set('result', $r) if $s->[0] > 0; return undef; }

package KwResult;
# What $executors->[0]->execute() returns: data, status (0 ok, else the error), err.
sub new { my ($class, %h) = @_; return bless { %h }, $class; }
sub data { return $_[0]->{data} || []; }
sub status { return $_[0]->{status} || 0; }
sub err { return $_[0]->{err}; }
sub errstr { return $_[0]->{errstr}; }
sub affectedRows { return $_[0]->{rows}; }
sub rows { return scalar(@{$_[0]->data()}); }
sub query { return $_[0]->{query}; }

package KwExecutor;
our $AUTOLOAD;
# meta: {default_schema, schemas: {s: [{name, view, rows, columns: [[name, type, key, meta, maxlen]]}]},
#        collations: [...], charsets: [...]}
sub new { my ($class, $meta, $conn_id, $user, $dsn, $version) = @_; my $s = bless { conn_id => $conn_id, user => $user, dsn => $dsn, version => $version }, $class; $s->setMeta($meta); return $s; }
sub setMeta {
    my ($s, $meta) = @_;
    $s->{meta} = $meta; $s->{by} = {};
    for my $schema (keys %{$meta->{schemas} || {}}) {
        for my $t (@{$meta->{schemas}{$schema}}) { $s->{by}{$schema}{$t->{name}} = $t; }
    }
    return undef;
}
sub _schema { my ($s, $schema) = @_; return defined $schema ? $schema : $s->{meta}{default_schema}; }
sub _list { my ($list, $none) = @_; return @$list ? [ sort @$list ] : [ $none ]; }
sub _tables { my ($s, $schema) = @_; return $s->{meta}{schemas}{$s->_schema($schema)} || []; }
sub _names { my ($s, $schema, $none, $pick) = @_; return _list([ map { $_->{name} } grep { $pick->($_) } @{$s->_tables($schema)} ], $none); }
sub metaTables { return $_[0]->_names($_[1], 'non_existing_table', sub { 1 }); }
sub metaBaseTables { return $_[0]->_names($_[1], 'non_existing_base_table', sub { !$_[0]{view} }); }
sub metaViews { return $_[0]->_names($_[1], 'non_existing_view', sub { $_[0]{view} }); }
sub metaBigTables { return $_[0]->_names($_[1], 'non_existing_big_table', sub { ($_[0]{rows} || 0) >= 500 }); }
sub metaSmallTables { return $_[0]->_names($_[1], 'non_existing_small_table', sub { ($_[0]{rows} || 0) < 500 }); }
sub metaBigBaseTables { return $_[0]->_names($_[1], 'non_existing_big_base_table', sub { !$_[0]{view} && ($_[0]{rows} || 0) >= 500 }); }
sub metaSmallBaseTables { return $_[0]->_names($_[1], 'non_existing_small_base_table', sub { !$_[0]{view} && ($_[0]{rows} || 0) < 500 }); }
sub isBigTable { my ($s, $table, $schema) = @_; my $t = $s->{by}{$s->_schema($schema)}{$table}; return ($t && ($t->{rows} || 0) >= 500) ? $t->{rows} : undef; }
sub metaSchemas { my @s = sort keys %{$_[0]->{meta}{schemas} || {}}; return @s ? \@s : [ 'non_existing_schema' ]; }
sub _table {
    my ($s, $table, $schema) = @_;
    $schema = $s->_schema($schema);
    $table = $s->metaTables($schema)->[0] unless defined $table;
    return ($s->{by}{$schema}{$table}, $table, $schema);
}
# columns as {name => [key, meta type, real type, max length]}, randgen's metaColumnInfo
sub metaColumnInfo {
    my ($s, $table, $schema) = @_;
    my ($t) = $s->_table($table, $schema);
    return undef unless $t;
    return { map { $_->[0] => [ ($_->[2] eq '' ? 'ordinary' : $_->[2]), $_->[3], $_->[1], $_->[4] ] } @{$t->{columns}} };
}
sub _columns {
    my ($s, $table, $schema, $pick) = @_;
    my ($t) = $s->_table($table, $schema);
    my $info = $s->metaColumnInfo($table, $schema) || { non_existing_column1 => ['ordinary', 'int'], non_existing_column2 => ['indexed', 'int'] };
    return _list([ grep { $pick->($info->{$_}, $t) } keys %$info ], 'non_existing_column');
}
sub metaColumns { my ($s, $table, $schema) = @_; my ($t) = $s->_table($table, $schema); return $t ? _list([ map { $_->[0] } @{$t->{columns}} ], 'non_existing_column') : [ 'non_existing_column' ]; }
sub _index_match { my ($want, $have, $t) = @_; $want = 'ordinary' if $t && $t->{view} && ($want eq 'indexed' || $want eq 'primary'); return $want eq 'indexed' ? ($have eq 'indexed' || $have eq 'primary') : $have eq $want; }
sub metaColumnsIndexType { my ($s, $idx, $table, $schema) = @_; return $s->_columns($table, $schema, sub { _index_match($idx, $_[0][0], $_[1]) }); }
sub metaColumnsIndexTypeNot { my ($s, $idx, $table, $schema) = @_; return $s->_columns($table, $schema, sub { my $i = ($_[1] && $_[1]{view} && $idx eq 'ordinary') ? 'unknown' : $idx; $_[0][0] ne $i }); }
sub metaColumnsDataType { my ($s, $type, $table, $schema) = @_; return $s->_columns($table, $schema, sub { $_[0][1] eq $type }); }
sub metaColumnsDataIndexType { my ($s, $type, $idx, $table, $schema) = @_; return $s->_columns($table, $schema, sub { $_[0][1] eq $type && _index_match($idx, $_[0][0], $_[1]) }); }
sub metaColumnsDataTypeIndexTypeNot { my ($s, $type, $idx, $table, $schema) = @_; return $s->_columns($table, $schema, sub { my $i = ($_[1] && $_[1]{view} && $idx eq 'ordinary') ? 'unknown' : $idx; $_[0][1] eq $type && $_[0][0] ne $i }); }
sub tables { return shift->metaTables(@_); }
sub baseTables { return shift->metaBaseTables(@_); }
sub views { return shift->metaViews(@_); }
sub smallTables { return shift->metaSmallTables(@_); }
sub bigTables { return shift->metaBigTables(@_); }
sub smallBaseTables { return shift->metaSmallBaseTables(@_); }
sub bigBaseTables { return shift->metaBigBaseTables(@_); }
sub tableColumns { return shift->metaColumns(@_); }
sub fields { return shift->metaColumns(@_); }
sub fieldsNoPK { my ($s, $table, $schema) = @_; return $s->metaColumnsIndexTypeNot('primary', $table, $schema); }
sub fieldsIndexed { my ($s, $table, $schema) = @_; return $s->metaColumnsIndexType('indexed', $table, $schema); }
sub columnRealType { my ($s, $col, @a) = @_; my $i = $s->metaColumnInfo(@a); return $i && $i->{$col} ? $i->{$col}[2] : undef; }
sub columnMetaType { my ($s, $col, @a) = @_; my $i = $s->metaColumnInfo(@a); return $i && $i->{$col} ? $i->{$col}[1] : undef; }
sub columnMaxLength { my ($s, $col, @a) = @_; my $i = $s->metaColumnInfo(@a); return $i && $i->{$col} ? $i->{$col}[3] : undef; }
sub metaCollations { return $_[0]->{meta}{collations} || []; }
sub metaCharactersets { return $_[0]->{meta}{charsets} || []; }
sub collations { return $_[0]->metaCollations(); }
sub charsets { return $_[0]->metaCharactersets(); }
sub schemas { return $_[0]->metaSchemas(); }
sub databases { return $_[0]->metaSchemas(); }
sub metaDatabases { return $_[0]->metaSchemas(); }
sub connectionId { return $_[0]->{conn_id}; }
sub currentUser { return $_[0]->{user}; }
sub defaultSchema { return $_[0]->{meta}{default_schema}; }
sub currentSchema { return $_[0]->{meta}{default_schema}; }
sub dsn { return $_[0]->{dsn}; }
sub version { return $_[0]->{version} || ''; }
sub serverVersion { return $_[0]->version(); }
sub versionNumeric { my @v = ($_[0]->version() =~ /^(\d+)\.(\d+)\.(\d+)/); return @v ? sprintf('%02d%02d%02d', @v) : ''; }
sub getName { return 'MySQL'; }
sub type { return 1; }
sub id { return 1; }
sub sqltrace { return 0; }
sub cacheMetaData { return undef; }
sub setMetadataReloadInterval { return undef; }
sub dbh {
    my $s = shift;
    return $s->{dbh} if $s->{dbh};
    die "no server connection in this context (generating without a server)\n" unless $s->{dsn};
    require DBI;
    $s->{dbh} = DBI->connect($s->{dsn}, undef, undef, { PrintError => 0, RaiseError => 0, AutoCommit => 1, mysql_auto_reconnect => 1 })
        or die "cannot connect to $s->{dsn}: $DBI::errstr\n";
    return $s->{dbh};
}
sub execute {
    my ($s, $query) = @_;
    my $dbh = $s->dbh();
    my $sth = $dbh->prepare($query);
    return KwResult->new(status => 1, err => $dbh->err, errstr => $dbh->errstr, query => $query) unless $sth;
    my $rows = $sth->execute();
    return KwResult->new(status => 1, err => $sth->err, errstr => $sth->errstr, query => $query) unless defined $rows;
    my $data = $sth->{NUM_OF_FIELDS} ? $sth->fetchall_arrayref() : [];
    return KwResult->new(status => 0, data => $data, rows => $rows, query => $query);
}
sub serverVariable {
    my ($s, $name) = @_;
    return undef unless $s->{dsn} && defined $name && $name =~ /^\w+$/;
    my $row = eval { $s->dbh()->selectrow_arrayref("SELECT \@\@$name") };
    return $row ? $row->[0] : undef;
}
sub AUTOLOAD {
    my $name = $AUTOLOAD; $name =~ s/.*:://;
    return if $name eq 'DESTROY';
    return undef if $name =~ /^set[A-Z]/;
    die "kewpie's executor has no method '$name' (see docs/randgen.md for the executor API)\n";
}

package KwGenerator;
sub new { my ($class, $tid, $prng) = @_; return bless { tid => $tid, prng => $prng }, $class; }
sub threadId { return $_[0]->{tid}; }
sub prng { return $_[0]->{prng}; }

package main;
our ($prng, $generator, $executors, $stack, $last_table, $last_field, $last_database, $_kw_pid);
my %compiled;
my $sentence = -1;

sub kw_reply { print $json->encode($_[0]), "\n"; }
# GenTest's say()/sayError(): grammars log with them; the coprocess has no log, so they are quiet
sub say { return 1; }
sub sayError { return 1; }
sub sayFile { return 1; }

while (my $line = <STDIN>) {
    my $msg = eval { $json->decode($line) };
    if (!$msg) { kw_reply({ ok => 0, error => "bad request: $@" }); next; }
    my $op = $msg->{op};
    if ($op eq 'init') {
        $prng = KwPrng->new($msg->{seed}, $msg->{varchar_length}, $msg->{words});
        $generator = KwGenerator->new($msg->{thread_id}, $prng);
        $executors = [ KwExecutor->new($msg->{meta}, $msg->{connection_id}, $msg->{user}, $msg->{dsn}, $msg->{version}) ];
        $_kw_pid = $msg->{pid};
        $stack = KwStack->new();
        kw_reply({ ok => 1 });
    } elsif ($op eq 'meta') {
        $executors->[0]->setMeta($msg->{meta});
        $executors->[0]{conn_id} = $msg->{connection_id} if defined $msg->{connection_id};
        kw_reply({ ok => 1 });
    } elsif ($op eq 'eval') {
        if ($msg->{s} != $sentence) { $sentence = $msg->{s}; $stack = KwStack->new(); }
        $last_table = $msg->{t}; $last_field = $msg->{f}; $last_database = $msg->{d};
        my $code = $msg->{code};
        my $sub = $compiled{$code};
        if (!$sub) {
            $sub = eval "no strict; no warnings; package main; sub { $code }";
            if (!$sub) { my $e = "$@"; chomp $e; kw_reply({ ok => 0, error => "syntax error: $e" }); next; }
            $compiled{$code} = $sub;
        }
        my $value = eval { $sub->() };
        if ($@) { my $e = "$@"; chomp $e; kw_reply({ ok => 0, error => $e }); next; }
        kw_reply({ ok => 1, v => (defined $value ? "$value" : undef) });
    } elsif ($op eq 'quit') {
        last;
    } else {
        kw_reply({ ok => 0, error => "unknown op $op" });
    }
}
