// Package conntrack reads a network namespace's connection-tracking table
// over netlink (NETLINK_NETFILTER, IPCTNL_MSG_CT_GET dump) — what
// `conntrack -L` shows — including the status bits that say whether a
// connection was source- or destination-NATed, which the vishvananda/netlink
// conntrack API does not return.
//
// The attribute parser is pure and tested on bytes; Dump is the thin part
// that opens a netlink socket inside a named namespace.
package conntrack
