// Package kit is the scenarios' toolbox: create a lab with a unique name,
// apply manifests, run commands and traffic inside it, and read back what
// the kernel did (iptables-save with counters, conntrack over netlink).
package kit
