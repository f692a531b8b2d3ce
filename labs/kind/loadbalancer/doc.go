// Package loadbalancer is the load balancer of svclab's kind clusters, in
// the manner of MetalLB's controller or cloud-provider-kind: it watches the
// Services of type LoadBalancer that name no spec.loadBalancerClass (or
// Class), gives each an IPv4 address of a pool in
// status.loadBalancer.ingress (ipMode VIP, so kube-proxy — the stock one or
// svclab's — programs the address itself), and takes the address back
// when the Service is deleted or stops being a LoadBalancer.
//
// Plan is the pure part (which Service gets which address); Run is the
// controller loop the svclab-loadbalancer Deployment runs in kube-system
// (`svclab loadbalancer --pool …`, Manifest). The pool is a block at the
// top of the kind Docker network's subnet that svclab routes to the
// control-plane node, as a netns lab's router sends its pool to the first
// node (package kind chooses it).
//
//	changes := loadbalancer.Plan(pool, services)
package loadbalancer
