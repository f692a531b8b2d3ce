// Package ociimage builds svclab's container image — the one the
// conformance suite's node agent, its scenario pods and its in-cluster Job
// run — from two statically linked binaries, and writes it as an OCI
// image layout, as an image archive (`docker load`, `ctr images import`),
// or pushes it to a registry and returns the digest-pinned reference a
// cluster svclab did not create is given.
//
// The image is one layer holding /svclab (the entrypoint; its default
// argument is netexec, so it runs where svclab/netexec:dev and agnhost
// run) and /svclab-conformance.test, for GOOS linux and this GOARCH. It has
// no shell and no C library, so a binary with an ELF interpreter (a
// dynamically linked one) is refused.
//
// The build is reproducible: every file time is the Unix epoch, every
// owner root (0/0), the entries are in a fixed order and the gzip header
// carries no time or name, so the same two binaries (and the same Go
// compress/flate) give the same digest on every machine.
//
// Pushes authenticate as docker does (authn.DefaultKeychain reads
// ~/.docker/config.json and its credential helpers); a registry that
// refuses them is named in one error that says to `docker login`.
package ociimage
