"""Sealed recipes for crashes in other languages' runtimes: glibc aborting a C program on a double
free, a Java StackOverflowError, Perl's Carp::confess, a Go panic beside other goroutines.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from sealed_common import Run, S, exits, recipe, sh, write

C_LEDGER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { char *name; double amount; } Entry;

static void release(Entry *e) { free(e->name); }

int main(void) {
    Entry entries[400];
    for (int i = 0; i < 400; i++) {
        entries[i].name = malloc(32);
        snprintf(entries[i].name, 32, "entry-%d", i);
        entries[i].amount = i * 10.5;
        printf("loaded %s %.2f\n", entries[i].name, entries[i].amount);
    }
    fflush(stdout);
    release(&entries[2]);
    for (int i = 0; i < 400; i++) release(&entries[i]);
    puts("done");
    return 0;
}
"""


@recipe("c-double-free-abort", "ledger", "crash", ["ldd", "--version"], needs=("gcc",))
def _c_abort(root):
    """Write the `c-double-free-abort` project under `root`; return its command and signals."""
    write(root, "ledger.c", C_LEDGER)
    sh(["gcc", "-O0", "-o", "ledger", "ledger.c"], root)
    return Run(["./ledger"], [
        S("stderr", r"^free\(\): double free detected in tcache 2$", "glibc's reason for the abort"),
        S("stderr", r"Aborted +\./ledger$", "the shell's report of the abort"),
        S("stdout", r"^loaded entry-399 4189\.50$", "the last step before the crash"),
    ], command="./ledger; exit $?", expect_exit=exits(134))


JAVA_TREE = """
package shop;

import java.util.HashMap;
import java.util.Map;

public class Categories {
    private final Map<String, String> parent = new HashMap<>();

    String path(String name) {
        String up = parent.get(name);
        return up == null ? name : path(up) + " / " + name;
    }

    public static void main(String[] args) {
        Categories c = new Categories();
        c.parent.put("shoes", "clothing");
        c.parent.put("clothing", "fashion");
        c.parent.put("fashion", "shoes");
        System.out.println("resolving category paths");
        System.out.println(c.path("shoes"));
    }
}
"""


@recipe("java-stack-overflow", "java", "crash", ["java", "-version"], needs=("javac", "java"))
def _java_so(root):
    """Write the `java-stack-overflow` project under `root`; return its command and signals."""
    write(root, "src/shop/Categories.java", JAVA_TREE)
    sh(["javac", "-d", "out", "src/shop/Categories.java"], root)
    return Run(["java", "-Xss512k", "-cp", "out", "shop.Categories"], [
        S("stderr", r'^Exception in thread "main" java\.lang\.StackOverflowError$', "the exception"),
        S("stderr", r"^\tat shop\.Categories\.path\(Categories\.java:10\)$", "the innermost frame in the project's code"),
        S("stdout", r"^resolving category paths$", "the last step before the crash"),
    ], expect_exit=exits(1))


PERL_IMPORT = """
use strict;
use warnings;
use Carp qw(confess);

sub parse_row {
    my ($line, $n) = @_;
    my @f = split /,/, $line;
    confess "row $n: expected 4 fields, got " . scalar(@f) unless @f == 4;
    return { sku => $f[0], qty => $f[1], price => $f[2], warehouse => $f[3] };
}

sub load_rows {
    my ($path) = @_;
    open my $fh, '<', $path or die "cannot open $path: $!";
    my @rows;
    my $n = 0;
    while (my $line = <$fh>) {
        chomp $line;
        $n++;
        push @rows, parse_row($line, $n);
        print "row $n: $rows[-1]{sku} x $rows[-1]{qty} in $rows[-1]{warehouse}\\n";
    }
    return \\@rows;
}

sub import_stock { my $rows = load_rows(shift); print scalar(@$rows), " rows imported\\n"; }

print "importing stock.csv\\n";
import_stock('stock.csv');
"""


@recipe("perl-carp-confess", "perl", "crash", ["perl", "-e", "print qq{perl $^V\\n}"], needs=("perl",))
def _perl_confess(root):
    """Write the `perl-carp-confess` project under `root`; return its command and signals."""
    rows = [f"SKU-{n},{n % 9 + 1},{n * 1.25:.2f},WH{n % 3}" for n in range(1, 400)]
    rows[316] = "SKU-317,4,9.99"
    write(root, "stock.csv", "\n".join(rows) + "\n")
    write(root, "import_stock.pl", PERL_IMPORT)
    return Run(["perl", "import_stock.pl"], [
        S("stderr", r"^row 317: expected 4 fields, got 3 at import_stock\.pl line \d+, <\$fh> line 317\.$", "the error and its line"),
        S("stderr", r"^\tmain::parse_row\(\"SKU-317,4,9\.99\", 317\) called at import_stock\.pl line \d+$", "the caller"),
        S("stdout", r"^row 316: ", "the last row imported before the error"),
    ], expect_exit=exits(25))


GO_PANIC = """package main

import (
\t"fmt"
\t"sync"
\t"time"
)

type Order struct {
\tID    int
\tItems []string
}

func worker(id int, jobs <-chan *Order, wg *sync.WaitGroup) {
\tdefer wg.Done()
\tfor o := range jobs {
\t\tfmt.Printf("worker %d: order %d has %d items\\n", id, o.ID, len(o.Items))
\t\ttime.Sleep(time.Millisecond)
\t}
}

func first(o *Order) string {
\treturn o.Items[0]
}

func main() {
\tjobs := make(chan *Order)
\tvar wg sync.WaitGroup
\tfor i := 0; i < 60; i++ {
\t\twg.Add(1)
\t\tgo worker(i, jobs, &wg)
\t}
\torders := []*Order{{ID: 1, Items: []string{"a"}}, {ID: 2, Items: nil}}
\tfor _, o := range orders {
\t\tjobs <- o
\t\tfmt.Println("first item:", first(o))
\t}
\tclose(jobs)
\twg.Wait()
}
"""


@recipe("go-run-panic-goroutines", "go", "crash", ["go", "version"], needs=("go",))
def _go_panic(root):
    """Write the `go-run-panic-goroutines` project under `root`; return its command and signals."""
    write(root, "go.mod", "module example.org/orders\n\ngo 1.19\n")
    write(root, "main.go", GO_PANIC)
    env = {"GOTRACEBACK": "all", "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOCACHE": f"{root}/.gocache",
           "GOPATH": f"{root}/.gopath"}
    return Run(["go", "run", "."], [
        S("stderr", r"^panic: runtime error: index out of range \[0\] with length 0$", "the panic"),
        S("stderr", r"^goroutine 1 \[running\]:$", "the panicking goroutine's trace start"),
        S("stderr", r"^main\.first\(\.\.\.\)$|/go-run-panic-goroutines/main\.go:23$", "the project's frame and line"),
        S("stderr", r"^exit status 2$", "the program's exit status"),
    ], env=env, expect_exit=exits(1))
