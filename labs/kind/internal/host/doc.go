// Package host detects the quirks of the machine svclab's kind clusters run
// on, so that the tooling adapts to them instead of assuming them.
package host
