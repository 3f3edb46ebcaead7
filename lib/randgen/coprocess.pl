#!/usr/bin/perl
# kewpie's Perl coprocess for grammar blocks outside the native subset.
# One process per generator thread.  Protocol: one JSON object per line on
# stdin, one JSON reply per line on stdout (see lib/randgen/perl_coprocess.py).
use strict;
use warnings;
no warnings;
use JSON::PP;

$| = 1;
my $json = JSON::PP->new->allow_nonref->allow_blessed->convert_blessed;

package KwPrng;
sub new { my ($class, $seed, $vlen, $words) = @_; srand($seed); return bless { vlen => $vlen || 1, words => $words || [] }, $class; }
sub int { my ($s, $lo, $hi) = @_; $lo = 0 unless defined $lo; $hi = 65535 unless defined $hi; ($lo, $hi) = ($hi, $lo) if $hi < $lo; return $lo + CORE::int(rand() * ($hi - $lo + 1)); }
sub uint16 { return $_[0]->int($_[1], $_[2]); }
sub float { my ($s, $lo, $hi) = @_; return $lo + rand() * ($hi - $lo); }
sub digit { return CORE::int(rand() * 10); }
sub positive_digit { return 1 + CORE::int(rand() * 9); }
sub letter { return chr(97 + CORE::int(rand() * 26)); }
sub string { my ($s, $len) = @_; $len = $s->{vlen} unless defined $len; return '' if $len <= 0; my $n = $s->int(1, $len); return join('', map { chr(97 + CORE::int(rand() * 26)) } (1..$n)); }
sub arrayElement { my ($s, $a) = @_; return undef if !defined $a || $#{$a} < 0; return $a->[CORE::int(rand() * scalar(@$a))]; }
sub shuffleArray { my ($s, $a) = @_; for (my $i = @$a; --$i; ) { my $j = CORE::int(rand() * ($i + 1)); @$a[$i, $j] = @$a[$j, $i]; } return $a; }
sub date { my $s = shift; return sprintf('%04d-%02d-%02d', $s->int(1971, 2035), $s->int(1, 12), $s->int(1, 28)); }
sub year { return $_[0]->int(1971, 2035); }
sub time { my $s = shift; return sprintf('%02d:%02d:%02d.%06d', $s->int(0, 23), $s->int(0, 59), $s->int(0, 59), $s->int(0, 999999)); }
sub datetime { my $s = shift; return $s->date() . ' ' . $s->time(); }
sub timestamp { my $s = shift; my $d = $s->date(); $d =~ s/-//g; my $t = $s->time(); $t =~ s/://g; return $d . $t; }
sub hex { my ($s, $len) = @_; $len = 4 unless defined $len; return '0x' . join('', map { (0..9, 'A'..'F')[CORE::int(rand() * 16)] } (1..$s->int(1, $len))); }
sub quid { return join('', map { chr(65 + CORE::int(rand() * 26)) } (1..5)); }
sub bit { my ($s, $len) = @_; $len = 1 unless defined $len; return "b'" . join('', map { CORE::int(rand() * 2) } (1..$s->int(1, $len))) . "'"; }
sub fromDictionary { my $s = shift; return $s->arrayElement($s->{words}); }
sub english { return $_[0]->fromDictionary('english'); }

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

package KwExecutor;
sub new { my ($class, $meta, $conn_id, $user) = @_; return bless { meta => $meta, conn_id => $conn_id, user => $user }, $class; }
sub _schema { my ($s, $schema) = @_; return defined $schema ? $schema : $s->{meta}{default_schema}; }
sub _tables { my ($s, $schema) = @_; return $s->{meta}{schemas}{$s->_schema($schema)} || []; }
sub tables { my ($s, $schema) = @_; return [ map { $_->{name} } @{$s->_tables($schema)} ]; }
sub metaTables { return $_[0]->tables($_[1]); }
sub metaBaseTables { my ($s, $schema) = @_; return [ map { $_->{name} } grep { !$_->{view} } @{$s->_tables($schema)} ]; }
sub metaViews { my ($s, $schema) = @_; return [ map { $_->{name} } grep { $_->{view} } @{$s->_tables($schema)} ]; }
sub metaSchemas { return [ sort keys %{$_[0]->{meta}{schemas}} ]; }
sub schemas { return $_[0]->metaSchemas(); }
sub databases { return $_[0]->metaSchemas(); }
sub _table { my ($s, $table, $schema) = @_; my @t = @{$s->_tables($schema)}; return $t[0] unless defined $table; for (@t) { return $_ if $_->{name} eq $table } return undef; }
sub metaColumns { my ($s, $table, $schema) = @_; my $t = $s->_table($table, $schema); return [] unless $t; return [ map { $_->[0] } @{$t->{columns}} ]; }
sub fields { return $_[0]->metaColumns($_[1], $_[2]); }
sub fieldsNoPK { my ($s, $table, $schema) = @_; my $t = $s->_table($table, $schema); return [] unless $t; return [ map { $_->[0] } grep { $_->[2] ne 'primary' } @{$t->{columns}} ]; }
sub fieldsIndexed { my ($s, $table, $schema) = @_; my $t = $s->_table($table, $schema); return [] unless $t; return [ map { $_->[0] } grep { $_->[2] ne '' } @{$t->{columns}} ]; }
sub metaCollations { return $_[0]->{meta}{collations}; }
sub metaCharactersets { return $_[0]->{meta}{charsets}; }
sub collations { return $_[0]->{meta}{collations}; }
sub charsets { return $_[0]->{meta}{charsets}; }
sub connectionId { return $_[0]->{conn_id}; }
sub currentUser { return $_[0]->{user}; }
sub defaultSchema { return $_[0]->{meta}{default_schema}; }
sub currentSchema { return $_[0]->{meta}{default_schema}; }

package KwGenerator;
sub new { my ($class, $tid, $prng) = @_; return bless { tid => $tid, prng => $prng }, $class; }
sub threadId { return $_[0]->{tid}; }
sub prng { return $_[0]->{prng}; }

package main;
our ($prng, $generator, $executors, $stack, $last_table, $last_field, $last_database, $_kw_pid);
my %compiled;
my $sentence = -1;

sub kw_reply { print $json->encode($_[0]), "\n"; }

while (my $line = <STDIN>) {
    my $msg = eval { $json->decode($line) };
    if (!$msg) { kw_reply({ ok => 0, error => "bad request: $@" }); next; }
    my $op = $msg->{op};
    if ($op eq 'init') {
        $prng = KwPrng->new($msg->{seed}, $msg->{varchar_length}, $msg->{words});
        $generator = KwGenerator->new($msg->{thread_id}, $prng);
        $executors = [ KwExecutor->new($msg->{meta}, $msg->{connection_id}, $msg->{user}) ];
        $_kw_pid = $msg->{pid};
        $stack = KwStack->new();
        kw_reply({ ok => 1 });
    } elsif ($op eq 'meta') {
        $executors->[0]{meta} = $msg->{meta};
        $executors->[0]{conn_id} = $msg->{connection_id} if defined $msg->{connection_id};
        kw_reply({ ok => 1 });
    } elsif ($op eq 'eval') {
        if ($msg->{s} != $sentence) { $sentence = $msg->{s}; $stack = KwStack->new(); }
        $last_table = $msg->{t}; $last_field = $msg->{f}; $last_database = $msg->{d};
        my $code = $msg->{code};
        my $sub = $compiled{$code};
        if (!$sub) {
            $sub = eval "no strict; no warnings; package main; sub { $code }";
            if (!$sub) { kw_reply({ ok => 0, error => "syntax error: $@" }); next; }
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
