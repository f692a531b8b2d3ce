// Package netnsdial opens TCP connections from inside a named network
// namespace while the rest of the process stays where it is. svclab's
// dockerd and its kind clusters live in their own namespace, so the API
// server's 127.0.0.1:PORT is only reachable from there; a client-go
// rest.Config given this dialer reaches it from the host's namespace
// without a route, a port forward or any change to the host.
package netnsdial
