// Package boundedread reads files and streams up to a limit, so that a
// hostile or mistaken input (a lab file given as --config /dev/zero, a
// manifest of gigabytes) fails at once with an error naming the file and
// the limit instead of growing svclab's memory.
package boundedread
