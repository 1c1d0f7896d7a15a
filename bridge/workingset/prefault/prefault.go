// Package prefault maps the pages of the bridge's own executable into the
// process's page tables in one call, as the process starts.
//
// Start-up runs every package's initialisation and then the bridge's first
// steps, touching code and read-only data scattered over most of a 30 MB
// executable. Each first touch of a page is a page fault, which maps the
// pages around it (64 KiB) from the page cache; on the virtual machines the
// bridge was measured on, some nine hundred of them took a third of the CPU
// a start used before its first answer. Asking the kernel to map every
// read-only page of the executable at once (madvise MADV_POPULATE_READ)
// makes the first answer come 1-2 ms sooner there (the README's start-up
// figures).
//
// The package starts its work in init, and imports nothing but syscall and
// procmaps (its reader of /proc/self/maps, which imports nothing), so that
// it starts before the other packages' initialisation: Go
// initialises the packages sorted by import path, each once its own
// imports are initialised (the specification's "Package initialization"),
// and ours sorts before the libraries that cost most (go.mau.fi,
// golang.org, google.golang.org and most of the standard library). The
// main package imports it for that effect alone.
//
// The pages mapped are the file's, shared with every process of the same
// executable through the page cache, and nothing is copied; they count in
// the process's resident size (some 9 MiB more than start-up touched)
// until the bridge's working set trim (package workingset) drops them from
// the page tables, 5 s after start. On a kernel older than Linux 5.14 the
// call fails and start-up faults the pages in one by one, as before.
package prefault
