// Package access is what the conformance suite may do on a cluster and
// how its objects are named: the RBAC table (Permissions) that `svclab
// conformance rbac` prints, every request of the suite is checked against,
// and a 403 is explained with; the manifests of that RBAC; the labels of
// the suite's objects; the flags' parsers. It imports client types only,
// so the svclab binary (tools/cli) uses it without the suite's client and
// test libraries (package kube, which uses it for the same rules).
package access
