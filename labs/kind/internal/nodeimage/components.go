package nodeimage

import (
	"fmt"
	"strings"
)

// Component is one image kubeadm needs, made from one binary.
type Component struct {
	Image   string // the exact reference kubeadm prints
	Name    string // kube-apiserver, etcd, coredns, pause…
	Version string // the version the reference's tag names
	// Binary is the program's file name; the image has it in
	// /usr/local/bin (PATH) and, for coredns and pause, as the entrypoint.
	Binary string
	// WithTools: the image is the node's root filesystem plus the binary
	// (kube-proxy runs iptables, ipset, conntrack); others hold only the
	// binary.
	WithTools  bool
	Entrypoint []string
}

// parseComponents maps `kubeadm config images list` output to components:
//
//	registry.k8s.io/kube-apiserver:v1.36.4
//	registry.k8s.io/coredns/coredns:v1.14.2
//	registry.k8s.io/pause:3.10.1
//	registry.k8s.io/etcd:3.6.8-0
func parseComponents(list string) ([]Component, error) {
	var out []Component
	for _, ref := range strings.Fields(list) {
		i := strings.LastIndex(ref, ":")
		if i < 0 {
			return nil, fmt.Errorf("image %q has no tag", ref)
		}
		repo, tag := ref[:i], ref[i+1:]
		name := repo[strings.LastIndex(repo, "/")+1:]
		c := Component{Image: ref, Name: name, Binary: name}
		switch name {
		case "kube-apiserver", "kube-controller-manager", "kube-scheduler":
			c.Version = tag
		case "kube-proxy":
			c.Version, c.WithTools = tag, true
		case "etcd":
			// 3.6.8-0: the etcd version, then the image's revision.
			v, _, _ := strings.Cut(tag, "-")
			c.Version = "v" + v
			c.Entrypoint = []string{"/usr/local/bin/etcd"}
		case "coredns":
			c.Version = tag
			c.Entrypoint = []string{"/coredns"}
		case "pause":
			c.Version = tag
			c.Entrypoint = []string{"/pause"}
		default:
			return nil, fmt.Errorf("kubeadm wants image %q, which svclab does not know how to build", ref)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("kubeadm config images list printed no images")
	}
	return out, nil
}

// find returns the component with the given name.
func find(cs []Component, name string) (Component, bool) {
	for _, c := range cs {
		if c.Name == name {
			return c, true
		}
	}
	return Component{}, false
}

// importChanges are the `docker import --change` instructions of a
// component image.
func (c Component) importChanges() []string {
	ch := []string{"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	if len(c.Entrypoint) > 0 {
		ch = append(ch, `ENTRYPOINT ["`+strings.Join(c.Entrypoint, `", "`)+`"]`)
	}
	return ch
}

// filesInImage is where the binary goes in the image (coredns and pause
// also at the root, where their upstream images keep them).
func (c Component) filesInImage() []string {
	files := []string{"/usr/local/bin/" + c.Binary}
	switch c.Name {
	case "coredns":
		files = append(files, "/coredns")
	case "pause":
		files = append(files, "/pause")
	}
	return files
}
