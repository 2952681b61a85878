# oi's Perl kernel driver: runs cells with `eval` in package main, so package
# variables, subroutines and loaded modules persist (variables declared with
# `my` live only in their cell, as in any Perl file). Protocol: JSON lines on
# fd 3 (requests) and fd 4 (replies); after each cell a marker with a
# per-kernel token on stdout and stderr.
use strict;
use warnings;
use JSON::PP ();
use Fcntl qw(F_GETFD F_SETFD FD_CLOEXEC);
use IO::Handle;

my $oi_token = delete $ENV{OI_KERNEL_TOKEN} // '';
open(my $oi_in, '<&=', 3) or die "fd 3: $!";
open(my $oi_ctl, '>&=', 4) or die "fd 4: $!";
for my $fh ($oi_in, $oi_ctl) {
    my $flags = fcntl($fh, F_GETFD, 0);
    fcntl($fh, F_SETFD, $flags | FD_CLOEXEC);
}
$oi_ctl->autoflush(1);
open(my $oi_out, '>&', \*STDOUT) or die "stdout: $!";
open(my $oi_err, '>&', \*STDERR) or die "stderr: $!";
STDOUT->autoflush(1);
STDERR->autoflush(1);
binmode(STDOUT, ':utf8');
binmode(STDERR, ':utf8');
my $oi_json = JSON::PP->new->utf8->canonical;
my ($oi_running, $oi_pending) = (0, 0);
$SIG{INT} = sub {
    if ($oi_running) { die "Interrupted\n" }
    $oi_pending = 1;
};
sub oi_send { print {$oi_ctl} $oi_json->encode($_[0]) . "\n" }
oi_send({ type => 'ready', pid => $$ });

while (my $line = <$oi_in>) {
    my $request = $oi_json->decode($line);
    last unless $request->{type} eq 'run';
    my $id = $request->{id};
    $oi_pending = 0;
    oi_send({ type => 'started', id => $id });
    my $reply = { status => 'ok' };
    $oi_running = 1;
    my $ok = eval {
        die "Interrupted\n" if $oi_pending;
        my $code = "package main; no strict; no warnings;\n#line 1 \"<cell-$id>\"\n" . $request->{code};
        eval $code;
        die $@ if $@;
        1;
    };
    $oi_running = 0;
    if (!$ok) {
        my $error = $@ // 'unknown error';
        print STDERR $error;
        print STDERR "\n" unless $error =~ /\n\z/;
        chomp(my $summary = $error);
        $reply = $summary eq 'Interrupted' ? { status => 'interrupted' } : { status => 'error', error => $summary };
    }
    STDOUT->flush;
    STDERR->flush;
    my $marker = "\e]oi;$oi_token;$id\a";
    print {$oi_out} $marker;
    $oi_out->flush;
    print {$oi_err} $marker;
    $oi_err->flush;
    oi_send({ %$reply, type => 'done', id => $id });
}
