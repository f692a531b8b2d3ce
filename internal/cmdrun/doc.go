// Package cmdrun runs the external commands svclab is made of (docker,
// debootstrap, go, apt-get, dpkg-deb, ip, chroot…) so that a failure says
// which command failed and the tail of what it printed.
package cmdrun
