// Package kind is svclab's second backend: real Kubernetes clusters made
// with kind (sigs.k8s.io/kind's Go API), fully offline — a real API
// server, kubelet, CoreDNS and stock kube-proxy (or svclab's proxy in its
// place), on an offline node image (package nodeimage), a pod network of
// svclab's own (package cni) or the real flannel (package flannel,
// --cni flannel: upstream's kube-flannel.yml on images nodeimage builds
// from Go modules), and a Docker daemon that, when svclab runs it, lives
// in its own network namespace (package dockerhost). LoadBalancer
// Services get an address from svclab's load balancer (package
// loadbalancer, the svclab-loadbalancer Deployment): a pool at the top of
// the kind network's subnet (LoadBalancerPool), routed to the control-plane
// node in that namespace.
//
//	c, err := kind.Create(ctx, kind.CreateOptions{ConfigFile: "clusters/kind/flannel-vxlan.yaml", Name: "demo"})
//	kind.Delete(ctx, "demo", os.Stdout) // logs exported first; idempotent
//
// Create reads an ordinary kind v1alpha4 Cluster config strictly (an
// unknown field is an error), then adds what svclab and the host need:
// disableDefaultCNI (kindnetd's image is out of reach offline), default
// pod and service subnets, kubeProxyMode none when svclab's proxy replaces
// kube-proxy, and the kubelet patch a cgroup v1 host needs (failCgroupV1:
// false). Nothing is left behind when a step fails: kind deletes a
// cluster it could not finish, svclab deletes one it could not finish
// setting up, and its dockerd stops when no cluster is left on it.
//
// Node containers are named as kind names them (N-control-plane,
// N-worker, N-worker2…), so `docker exec` works (with DOCKER_HOST set to
// svclab's daemon when svclab runs it). The kubeconfig kind writes points
// at 127.0.0.1 inside the daemon's namespace: use it with `ip netns exec
// svclab-docker kubectl …`, or run kubectl in the control-plane node.
package kind
