package scenarios

import (
	"net/netip"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/scenarios/kit/netnslab"
)

func itoa(i int) string { return strconv.Itoa(i) }

// serviceVIP returns the cluster IP the lab gave to default/<name>.
func serviceVIP(lab *netnslab.Lab, name string) netip.Addr {
	objs, _, err := lab.Store.ReadObjects()
	Expect(err).NotTo(HaveOccurred())
	svc := objs.Service("default", name)
	Expect(svc).NotTo(BeNil(), "service default/%s", name)
	return netip.MustParseAddr(svc.Spec.ClusterIP)
}

// podIPs maps the names of the pods labelled app=<app> to their IPs.
func podIPs(lab *netnslab.Lab, app string) map[string]netip.Addr {
	objs, _, err := lab.Store.ReadObjects()
	Expect(err).NotTo(HaveOccurred())
	out := map[string]netip.Addr{}
	for _, p := range objs.Pods {
		if p.Labels["app"] == app {
			out[p.Name] = netip.MustParseAddr(p.Status.PodIP)
		}
	}
	return out
}

// labOpts are the options the scenarios' lab operations run with.
func labOpts() netns.Options { return netnslab.Options(binary) }

func must(s string, err error) string {
	GinkgoHelper()
	Expect(err).NotTo(HaveOccurred())
	return s
}
