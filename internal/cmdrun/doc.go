// Package cmdrun runs the external commands svclab's kind backend is made
// of (docker, debootstrap, go, ip, chroot) so that a failure says which
// command failed and what it printed.
package cmdrun
