package ui_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/tools/ui"
)

// trafficCount is how many connections the page sends in the test.
const trafficCount = 200

// TestIntegrationPageInChromium serves the page for a real single-node lab
// with seed 001's nginx (3 pods) and loads it in Debian's headless Chromium
// by the link `svclab ui` prints (#token=…), which the page trades for its
// session; the page presses the traffic button through the link's
// &send=… parameter, and Chromium dumps the DOM the page built. The DOM must
// show the node by name, the topology as an inline SVG naming the lab's
// hosts, the nginx Service's chains with the kernel's counters (its
// endpoint rules counting exactly the connections sent), the traffic split
// as bars naming the three pods with a pass verdict, and "no trace yet";
// after a trace picture appears in the lab's store, the page shows it.
func TestIntegrationPageInChromium(t *testing.T) {
	roottest.Require(t, "builds a lab from network namespaces")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := hostprog.Ensure(ctx, os.Stderr, hostprog.Chromium); err != nil {
		t.Fatalf("the page test needs Debian's chromium: %v", err)
	}
	bin := roottest.SharedBinary(t)
	lab := singleNodeLabWithNginx(t, bin)

	served := make(chan *ui.Server, 1)
	serveErr := make(chan error, 1)
	go func() {
		serveErr <- ui.Serve(ctx, "127.0.0.1:0", &ui.LabSource{Lab: lab, Binary: bin}, func(s *ui.Server) { served <- s })
	}()
	var srv *ui.Server
	select {
	case srv = <-served:
	case err := <-serveErr:
		t.Fatalf("ui.Serve: %v", err)
	}
	defer func() {
		cancel()
		if err := <-serveErr; err != nil {
			t.Errorf("ui.Serve: %v", err)
		}
	}()

	q := url.Values{"send": {"default/nginx:80"}, "count": {strconv.Itoa(trafficCount)}}
	dom := dumpDOM(ctx, t, srv.SessionURL()+"&"+q.Encode(), true)

	checkNodesAndTopology(t, dom, lab)
	checkChains(t, dom)
	checkTrafficBars(t, dom)
	if !strings.Contains(section(dom, `id="trace"`), "no trace yet") {
		t.Errorf("the trace panel does not say \"no trace yet\":\n%s", section(dom, `id="trace"`))
	}

	// A trace appears in the store (as `svclab trace` saves it): the
	// page's first state after it shows it as a picture, however recently
	// the nodes' kernels were read.
	if err := lab.Store.WriteLastTrace([]byte(`{}`), []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`)); err != nil {
		t.Fatal(err)
	}
	dom = dumpDOM(ctx, t, srv.SessionURL(), true)
	if !regexp.MustCompile(`<img src="/api/trace\.svg\?t=[^"]+" alt="the last svclab trace">`).MatchString(dom) {
		t.Errorf("the trace panel does not show the store's trace:\n%s", section(dom, `id="trace"`))
	}

	// A browser without the link's token (another user's) sees the page
	// but nothing of the lab, and is told where the link is.
	dom = dumpDOM(ctx, t, srv.URL(), false)
	if !strings.Contains(dom, "no session: open the link") || strings.Contains(dom, `data-node=`) || strings.Contains(dom, lab.Name()) {
		t.Errorf("the page without the token shows the lab or no reason:\n%s", dom)
	}
}

// singleNodeLabWithNginx creates clusters/single-node.yaml under a unique
// name with clusters/workloads/nginx.yaml applied, deleted at the end.
func singleNodeLabWithNginx(t *testing.T, bin string) *netns.Lab {
	t.Helper()
	return labWith(t, bin, "single-node.yaml", "single-node", filepath.Join("workloads", "nginx.yaml"))
}

// labWith creates the lab of clusters/file (whose metadata.name is
// fileName) under a unique name, with clusters/workload applied; the lab
// is deleted at the end.
func labWith(t *testing.T, bin, file, fileName, workload string) *netns.Lab {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	clusters := filepath.Join(filepath.Dir(self), "..", "..", "clusters")
	name := roottest.UniqueName("ui")
	topo, err := os.ReadFile(filepath.Join(clusters, file))
	if err != nil {
		t.Fatal(err)
	}
	topoFile := filepath.Join(t.TempDir(), "lab.yaml")
	if err := os.WriteFile(topoFile, []byte(strings.Replace(string(topo), "name: "+fileName, "name: "+name, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exec.Command(bin, "delete", "lab", "--name", name).Run() })
	runSvclab(t, bin, "create", "lab", "--config", topoFile)
	runSvclab(t, bin, "apply", "--lab", name, "-f", filepath.Join(clusters, workload))
	lab, err := netns.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// runSvclab runs the svclab binary and fails the test if it fails.
func runSvclab(t *testing.T, bin string, args ...string) {
	t.Helper()
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("svclab %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// servePage serves the page of lab until the test ends.
func servePage(ctx context.Context, t *testing.T, lab *netns.Lab, bin string) *ui.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan *ui.Server, 1)
	serveErr := make(chan error, 1)
	go func() {
		serveErr <- ui.Serve(ctx, "127.0.0.1:0", &ui.LabSource{Lab: lab, Binary: bin}, func(s *ui.Server) { served <- s })
	}()
	select {
	case srv := <-served:
		t.Cleanup(func() {
			cancel()
			if err := <-serveErr; err != nil {
				t.Errorf("ui.Serve: %v", err)
			}
		})
		return srv
	case err := <-serveErr:
		cancel()
		t.Fatalf("ui.Serve: %v", err)
	}
	return nil
}

// dumpDOM loads pageURL in headless Chromium (a fresh profile: no cookie)
// and returns the DOM once the page's script has run: virtual time stands
// still while requests are pending, so the budget covers the state's and
// the traffic's answers. loaded says whether the page must have shown a
// state.
func dumpDOM(ctx context.Context, t *testing.T, pageURL string, loaded bool) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hostprog.Chromium, "--headless", "--disable-gpu", "--no-sandbox",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=5000", "--dump-dom", pageURL)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v\n%s", err, stderr.String())
	}
	dom := string(out)
	if strings.Contains(dom, `data-loaded="1"`) != loaded {
		t.Fatalf("the page's script loaded the state: %t, want %t:\n%s\n%s", !loaded, loaded, dom, stderr.String())
	}
	return dom
}

func checkNodesAndTopology(t *testing.T, dom string, lab *netns.Lab) {
	t.Helper()
	for _, n := range lab.Topology.Spec.Nodes {
		if !regexp.MustCompile(`<section class="node" data-node="` + n.Name + `"><h3>` + n.Name + `<`).MatchString(dom) {
			t.Errorf("the page shows no section for node %s", n.Name)
		}
	}
	topo := section(dom, `id="topology"`)
	if !strings.Contains(topo, "<svg") {
		t.Fatalf("no inline SVG in the topology panel:\n%s", topo)
	}
	for _, h := range lab.Topology.Hosts() {
		if !strings.Contains(topo, h.Name+" (") {
			t.Errorf("the topology does not draw host %s", h.Name)
		}
	}
	if !strings.Contains(topo, "router (router)") {
		t.Errorf("the topology does not draw the router")
	}
}

// checkChains: nginx's KUBE-SVC chain (upstream's hash of
// "default/nginx:" + "tcp") with its three endpoint rules whose counters
// add up to the connections sent.
func checkChains(t *testing.T, dom string) {
	t.Helper()
	for _, chain := range []string{"KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-SVC-2CMXP7HKUVJN7L6M", "KUBE-POSTROUTING"} {
		if !strings.Contains(dom, `data-chain="`+chain+`"><h4>`+chain+`</h4>`) {
			t.Errorf("the page does not show chain %s", chain)
		}
	}
	svc := chainSection(dom, "KUBE-SVC-2CMXP7HKUVJN7L6M")
	rules := regexp.MustCompile(`<li data-packets="(\d+)"[^>]*>.*?→ (KUBE-[A-Z0-9-]+)`).FindAllStringSubmatch(svc, -1)
	sum, endpoints := 0, 0
	for _, r := range rules {
		if strings.HasPrefix(r[2], "KUBE-SEP-") {
			n, _ := strconv.Atoi(r[1])
			sum += n
			endpoints++
		}
	}
	if endpoints != 3 || sum != trafficCount {
		t.Errorf("nginx's chain shows %d endpoint rules counting %d packets, want 3 counting %d:\n%s", endpoints, sum, trafficCount, svc)
	}
}

// checkTrafficBars: the bars SVG of the run, a pass, naming the pods.
func checkTrafficBars(t *testing.T, dom string) {
	t.Helper()
	res := section(dom, `id="traffic-result"`)
	if !strings.Contains(res, `data-verdict="pass"`) || !strings.Contains(res, "<svg") {
		t.Fatalf("no bars of a passing run in the traffic panel:\n%s\nmessage: %s", res, section(dom, `id="traffic-message"`))
	}
	pods := regexp.MustCompile(`>nginx-[a-z0-9]+-[a-z0-9]+<`).FindAllString(res, -1)
	if len(pods) != 3 {
		t.Errorf("the bars name %d pods, want nginx's 3: %v", len(pods), pods)
	}
	if !strings.Contains(res, fmt.Sprintf("%d connections, %d succeeded", trafficCount, trafficCount)) {
		t.Errorf("the bars do not say %d connections succeeded", trafficCount)
	}
}

// section is the DOM from the element with attr up to the next section
// element (good enough to look inside one panel of this page).
func section(dom, attr string) string { return cut(dom, attr, `<section `) }

// chainSection is the DOM of one chain, up to the next chain.
func chainSection(dom, chain string) string {
	return cut(dom, `data-chain="`+chain+`"`, `data-chain=`)
}

// cut is dom from the first from up to the next until.
func cut(dom, from, until string) string {
	i := strings.Index(dom, from)
	if i < 0 {
		return ""
	}
	rest := dom[i:]
	if j := strings.Index(rest[len(from):], until); j >= 0 {
		rest = rest[:len(from)+j]
	}
	return rest
}
