// Package topology reads and validates svclab lab files.
//
// A lab file is one YAML document that describes the hosts of a lab (the
// Kubernetes nodes and the clients outside the cluster), the cluster's
// address plan and the CNI flavour to imitate:
//
//	apiVersion: svclab.dev/v1alpha1
//	kind: Lab
//	metadata: {name: basic}
//	spec:
//	  cni: flannel-vxlan          # flannel-vxlan | calico-proxyarp | canal
//	  ipFamily: ipv4              # ipv4 (the default) | ipv6 | dual, kind's field
//	  podSubnet: 10.244.0.0/16    # the cluster CIDR
//	  serviceSubnet: 10.96.0.0/16
//	  proxy: {mode: iptables, iptablesBackend: ""}
//	  nodes:
//	  - {name: node1, ip: 192.168.16.73/20, podCIDR: 10.244.1.0/24}
//	  clients:
//	  - {name: client, ip: 192.168.55.230/24}
//	  loadBalancer: {pool: 192.168.100.10-192.168.100.20}  # optional: LoadBalancer addresses
//	  externalIPs: [203.0.113.0/24]  # optional: routed to the cluster for spec.externalIPs
//
// A dual-stack lab (ipFamily: dual) writes a value per family in kind's
// comma form, the primary family first ("10.244.0.0/16,fd00:10:244::/56";
// quote it inside a flow mapping {…}), and may leave out what kind or the
// lab can supply: IPv6 subnets default to kind's (fd00:10:244::/56 for
// pods, fd00:10:96::/112 for Services), a host's IPv6 address is derived
// from its IPv4 one (DeriveIPv6HostIP: fd00::/96 with the IPv4 address in
// its low bits), and a node's IPv6 pod range is the /64 of the same
// number as its IPv4 range (kube-controller-manager's default IPv6 node
// mask). An ipv6 lab takes the same file: its IPv4 values only serve to
// derive from. complete.go says it precisely.
//
// The package is pure: it touches no kernel state. Load and Parse decode
// strictly (an unknown or misspelt field is an error, and so is a duplicate
// key), then validate. Validation reports every problem of the file at
// once, in the order of its fields, one line each that names the file, the
// field path and the offending value, e.g.
//
//	topology clusters/x.yaml: metadata.name "Basic_1": not a DNS label: …
//	topology clusters/x.yaml: spec.nodes[1].podCIDR "10.0.0.0/33": invalid CIDR
//
// A field says its first problem only, and a check that needs a field with
// a problem is skipped (problems.go), so every line is a mistake to fix.
// A document that does not decode stops at that one error.
//
// The result is typed (netip.Prefix, netip.Addr), so callers never re-parse
// an address.
package topology
