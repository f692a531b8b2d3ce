// Package kernel is the narrow interface between svclab's IPVS mode and the
// Linux kernel: IPVS virtual and real servers, the kube-ipvs0 dummy device
// and its addresses, ipsets, and sysctls. Everything above it
// (proxy/ipvs) is pure computation over the plain types defined here.
//
// Netlink implements Interface for one network namespace:
//
//   - IPVS through github.com/moby/ipvs (generic netlink, what upstream's
//     pkg/proxy/ipvs/util uses), the equivalent of ipvsadm;
//   - links and addresses through github.com/vishvananda/netlink (upstream's
//     pkg/proxy/ipvs/netlink_linux.go), the equivalent of `ip link` and
//     `ip addr`;
//   - ipsets through vishvananda/netlink's ipset API (upstream runs the
//     ipset command instead: pkg/proxy/ipvs/ipset). That API cannot add to
//     or delete from a bitmap:port set — it always sends a protocol
//     attribute with a port, which bitmap:port rejects with "invalid
//     protocol" — so those two requests are built here with the library's
//     nl package. Using netlink means no ipset binary is needed on the node;
//   - sysctls by writing /proc/sys inside the namespace.
//
// Counting wraps any Interface and counts its calls by method (Calls),
// which is how a sync reports the netlink requests it made. The package
// kerneltest holds a fake Interface that keeps the state in memory,
// refuses what the kernel refuses, and counts its calls the same way.
package kernel
