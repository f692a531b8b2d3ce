// Package hostprog declares every external program svclab runs on the host,
// with the Debian package that provides it and what needs it, and makes sure
// the programs a command needs are there before the command starts.
//
// Programs is the table of programs, DataFiles (datafiles.go) that of the
// data files a program needs but its package only Recommends (Debian's
// archive keyring for debootstrap). A command calls Ensure with what it needs
// (Needs(Cluster), Needs(Lab)…) before its first step: a missing program is
// installed with apt-get (one `apt-get update`, then one `apt-get install`
// of every missing package, services kept from starting by a policy-rc.d
// of svclab's own that no kill leaves behind unnoticed: policyrcd.go), or, where
// installing is off (not root, or SVCLAB_NO_INSTALL=1), Ensure fails at once
// with one error naming each missing program and its package:
//
//	if err := hostprog.Ensure(ctx, out, hostprog.Needs(hostprog.Cluster)...); err != nil {
//		return err
//	}
//
// The CLI equivalent of what Ensure installs is
// `apt-get update && apt-get install -y --no-install-recommends PKG…`.
//
// A unit test parses every Go file of the module and fails, naming file and
// line, for a program the code executes that is not declared here; another
// keeps the Makefile's package lists (LAB_APT_PKGS for the labs and
// lessons, TEST_APT_PKGS for the tests) equal to what their uses need.
package hostprog
