// Package conformance is the scenarios that run unchanged on every
// backend: svclab's netns labs (`go test ./scenarios/conformance`, part of
// `make test`) and any Kubernetes cluster (bin/svclab-conformance.test,
// built from ./e2e: `svclab conformance --kubeconfig FILE` runs it, and
// `make e2e-kind` runs it on kind clusters made for the run through
// e2e-framework). The specs see only a kit.Target; the runner passes
// Register the Options that make it (and the image), before RunSpecs.
//
// Each spec asserts a Service behaviour any proxy must have, against real
// connections; where the proxy is kube-proxy (or svclab's) some also read
// the kernel's evidence (rules, counters, conntrack entries). The
// families, by label (SpecLabels, which `--label-filter` selects by):
//
//   - distribution: a two-pod 50/50 split and a three-pod ladder, from a
//     pod and from outside the pod network (split.go);
//   - nodeport, cross-node: a cross-node NodePort whose pod sees the
//     entry node's address (nodeport.go); nodeport-sources: a NodePort
//     from a pod, a node and outside (nodeport_sources.go);
//   - clusterip, multiport, udp: TCP and UDP on one port number, two
//     named ports (clusterip.go); noendpoints: rejected at once, not
//     dropped (noendpoints.go); conntrack: a UDP client's stale entry
//     cleared when its backend goes (udpconntrack.go);
//   - affinity: ClientIP session affinity and its timeout (affinity.go);
//     trafficpolicy: internal and external traffic policy Local and the
//     health check node port (trafficpolicy.go); terminating: the
//     terminating-endpoint fallback (terminating.go); hairpin: a pod
//     through its own Service (hairpin.go); dns: a Service's, a headless
//     one's and an ExternalName one's name through cluster DNS (dns.go);
//     loadbalancer: where the cluster assigns addresses (loadbalancer.go);
//   - mode-switch, Disruptive: the proxy-mode switch of seed 001
//     (modeswitch.go); kube-proxy-internals: the specs that assert
//     kube-proxy's rules themselves.
//
// A label may gate a spec (requirements.go): it skips, saying why, where
// the target lacks what it needs. scenarios/conformance/README.md maps
// every spec to the upstream end-to-end spec it corresponds to.
//
// Options: Disruptive also runs the Disruptive specs (they skip without
// it); ServerImage is the image of the pods that only serve (upstream's
// agnhost works); Artifacts is a directory for each failed spec's
// evidence — the node's rules for its Service, its conntrack entries and
// a trace of one connection (evidence.go), which the JUnit report has
// either way.
package conformance
