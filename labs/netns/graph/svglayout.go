package graph

import (
	"cmp"
	"slices"
	"unicode/utf8"
)

// The SVG picture's layout, in pixels. It is deterministic and simple:
//
//	row 0:  the router, then the clients beside it
//	buses:  one horizontal line per LAN bridge of the router; the router
//	        drops a line to each, every host on the LAN a line to it
//	row 1:  the nodes, each at the head of a column as wide as its pods
//	VXLAN:  a dashed line joining the nodes' VTEPs, when they have tunnels
//	row 2:  each node's pods under it, each joined to it by its veth
const (
	fontSize   = 12.0
	charW      = 7.3 // a 12px monospace character (0.6em), rounded up
	smallSize  = 10.0
	smallCharW = 6.1
	lineH      = 15.0
	pad        = 8.0
	margin     = 20.0
	gapX       = 36.0
	busGap     = 30.0
	titleH     = 44.0
	dropH      = 44.0 // from a bus (or the VXLAN line) down to a row
	podLinkX   = 10.0 // where a pod's veth meets its box, from its left edge
)

type box struct {
	host  *Host
	lines []string // heading first
	x, y  float64
	w, h  float64
}

func (b *box) cx() float64     { return b.x + b.w/2 }
func (b *box) bottom() float64 { return b.y + b.h }
func (b *box) right() float64  { return b.x + b.w }

// segment is a line with an optional label whose baseline starts at (lx, ly).
type segment struct {
	x1, y1, x2, y2 float64
	dashed         bool
	label          string
	lx, ly         float64
}

// bus is a horizontal line with a caption above its left end, or past its
// right end.
type bus struct {
	label      string
	y          float64
	x0, x1     float64
	dashed     bool
	labelRight bool
}

// labelX is where the bus's caption starts.
func (bs bus) labelX() float64 {
	if bs.labelRight {
		return bs.x1 + 12
	}
	return bs.x0
}

type layout struct {
	w, h     float64
	boxes    []*box
	buses    []bus
	segments []segment
	// joints mark where a line meets a bus, so that a line merely
	// crossing another LAN's bus is told apart from one joining it.
	joints []point
	byName map[string]*box
}

type point struct{ x, y float64 }

func textWidth(s string, cw float64) float64 { return float64(utf8.RuneCountInString(s)) * cw }

func newBox(h *Host) *box {
	b := &box{host: h, lines: append([]string{h.heading()}, h.details()...)}
	for _, l := range b.lines {
		b.w = max(b.w, textWidth(l, charW)+2*pad)
	}
	b.h = float64(len(b.lines))*lineH + 2*pad - (lineH - fontSize)
	return b
}

// layOut places every host's box, then the lines between them.
func layOut(g *Graph) *layout {
	lay := &layout{byName: map[string]*box{}}
	for i := range g.Hosts {
		b := newBox(&g.Hosts[i])
		lay.byName[b.host.Name] = b
		lay.boxes = append(lay.boxes, b)
	}
	lay.widenPods(g)
	buses := lanBuses(g)
	row0Bottom := lay.placeTopRow(g)
	busY := func(k int) float64 { return row0Bottom + busGap*float64(k+1) }
	nodesY := busY(len(buses)-1) + dropH
	nodesBottom := lay.placeNodes(g, nodesY)
	vxlanY, podsY := nodesBottom+busGap, nodesBottom+dropH
	if hasTunnels(g) {
		podsY = vxlanY + dropH
	}
	lay.placePods(g, podsY)
	for k, lb := range buses {
		lay.drawLAN(g, lb, k, len(buses), busY(k))
	}
	lay.drawTunnels(g, vxlanY)
	lay.drawPodLinks(g)
	for _, b := range lay.boxes {
		lay.w = max(lay.w, b.right()+margin)
		lay.h = max(lay.h, b.bottom()+margin)
	}
	for _, bs := range lay.buses {
		lay.w = max(lay.w, bs.labelX()+textWidth(bs.label, smallCharW)+margin, bs.x1+margin)
	}
	lay.w = max(lay.w, textWidth(g.Title(), charW)+2*margin)
	return lay
}

// podLink is a veth link between a pod and its node, pod end first.
func podLink(g *Graph, l Link) (pod, node End, ok bool) {
	if l.Kind != LinkVeth {
		return End{}, End{}, false
	}
	for _, pair := range [][2]End{{l.A, l.B}, {l.B, l.A}} {
		if h, found := g.Host(pair[0].Host); found && h.Role == RolePod && h.Node == pair[1].Host {
			return pair[0], pair[1], true
		}
	}
	return End{}, End{}, false
}

// podLabel names a pod's veth: "cali0123456789a ↔ eth0", node side first.
func podLabel(pod, node End) string { return node.Interface + " ↔ " + pod.Interface }

// widenPods makes each pod's box at least as wide as its veth's label,
// written above it.
func (lay *layout) widenPods(g *Graph) {
	for _, l := range g.Links {
		if pod, node, ok := podLink(g, l); ok {
			b := lay.byName[pod.Host]
			b.w = max(b.w, podLinkX+6+textWidth(podLabel(pod, node), smallCharW)+4)
		}
	}
}

func (lay *layout) placeTopRow(g *Graph) float64 {
	x, bottom := margin, titleH
	for _, h := range g.Hosts {
		if h.Role != RoleRouter && h.Role != RoleClient {
			continue
		}
		b := lay.byName[h.Name]
		b.x, b.y = x, titleH
		x = b.right() + gapX
		bottom = max(bottom, b.bottom())
	}
	return bottom
}

// podsOf are a node's pods' boxes, in graph order.
func (lay *layout) podsOf(g *Graph, node string) []*box {
	var out []*box
	for _, h := range g.Hosts {
		if h.Role == RolePod && h.Node == node {
			out = append(out, lay.byName[h.Name])
		}
	}
	return out
}

func rowWidth(boxes []*box) float64 {
	w := 0.0
	for i, b := range boxes {
		if i > 0 {
			w += gapX / 2
		}
		w += b.w
	}
	return w
}

// placeNodes puts the nodes in a row of columns, each as wide as the node
// or its pods, whichever is wider; it returns the row's bottom.
func (lay *layout) placeNodes(g *Graph, y float64) float64 {
	x, bottom := margin, y
	for _, h := range g.Hosts {
		if h.Role != RoleNode {
			continue
		}
		b := lay.byName[h.Name]
		colW := max(b.w, rowWidth(lay.podsOf(g, h.Name)))
		b.x, b.y = x+(colW-b.w)/2, y
		x += colW + gapX
		bottom = max(bottom, b.bottom())
	}
	return bottom
}

// placePods centres each node's pods in a row under it.
func (lay *layout) placePods(g *Graph, y float64) {
	for _, h := range g.Hosts {
		if h.Role != RoleNode {
			continue
		}
		node, pods := lay.byName[h.Name], lay.podsOf(g, h.Name)
		x := node.cx() - rowWidth(pods)/2
		for _, p := range pods {
			p.x, p.y = x, y
			x = p.right() + gapX/2
		}
	}
}

// lanBus is a router bridge and the links of its ports.
type lanBus struct {
	bridge  Interface
	ports   []End // the router's ends
	members []End // the hosts' ends
	hasNode bool
}

// lanBuses are the router's bridges with their ports' far ends, those with
// nodes last (drawn lowest, nearest the nodes).
func lanBuses(g *Graph) []lanBus {
	var buses []lanBus
	router, ok := g.Host(routerName(g))
	if !ok {
		return nil
	}
	for _, i := range router.Interfaces {
		if i.Kind != IfBridge {
			continue
		}
		lb := lanBus{bridge: i}
		for _, l := range g.Links {
			near, far := l.A, l.B
			if near.Host != router.Name {
				near, far = far, near
			}
			if l.Kind != LinkVeth || near.Host != router.Name {
				continue
			}
			if br, ok := g.bridgeOf(near); ok && br == i.Name {
				lb.ports = append(lb.ports, near)
				lb.members = append(lb.members, far)
				if h, ok := g.Host(far.Host); ok && h.Role == RoleNode {
					lb.hasNode = true
				}
			}
		}
		buses = append(buses, lb)
	}
	slices.SortStableFunc(buses, func(a, b lanBus) int { return cmp.Compare(boolInt(a.hasNode), boolInt(b.hasNode)) })
	return buses
}

func routerName(g *Graph) string {
	for _, h := range g.Hosts {
		if h.Role == RoleRouter {
			return h.Name
		}
	}
	return ""
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// drawLAN draws bus k of n at y: the router drops to it at a point across
// its bottom edge (the lowest bus leftmost, so that its drops cross no
// other bus), and each member host meets it at its centre, from below
// (nodes) or from above (clients), the veth's ends written by the drop.
func (lay *layout) drawLAN(g *Graph, lb lanBus, k, n int, y float64) {
	label := lb.bridge.Name
	for _, s := range lb.bridge.bridgeSubnets() {
		label += " " + s.String()
	}
	bs := bus{label: label, y: y, x0: 1e9, x1: -1e9}
	if r, ok := lay.byName[routerName(g)]; ok {
		rx := r.x + r.w*float64(n-k)/float64(n+1)
		lay.segments = append(lay.segments, segment{x1: rx, y1: r.bottom(), x2: rx, y2: y})
		lay.joints = append(lay.joints, point{rx, y})
		bs.x0, bs.x1 = min(bs.x0, rx), max(bs.x1, rx)
	}
	for i, m := range lb.members {
		b, ok := lay.byName[m.Host]
		if !ok {
			continue
		}
		s := segment{x1: b.cx(), x2: b.cx(), label: lb.ports[i].Interface + " ↔ " + m.Interface, lx: b.cx() + 4}
		if b.y > y {
			s.y1, s.y2, s.ly = y, b.y, b.y-6
		} else {
			s.y1, s.y2, s.ly = b.bottom(), y, b.bottom()+12
		}
		lay.segments = append(lay.segments, s)
		lay.joints = append(lay.joints, point{b.cx(), y})
		bs.x0, bs.x1 = min(bs.x0, b.cx()), max(bs.x1, b.cx())
	}
	if bs.x0 <= bs.x1 {
		lay.buses = append(lay.buses, bs)
	}
}

func hasTunnels(g *Graph) bool {
	for _, l := range g.Links {
		if l.Kind == LinkVXLAN {
			return true
		}
	}
	return false
}

// drawTunnels joins the nodes with VXLAN tunnels by one dashed line at y,
// each dropping to it from its box's lower right corner (pods' veths keep
// clear of it).
func (lay *layout) drawTunnels(g *Graph, y float64) {
	var first *Link
	joined := map[string]bool{}
	for i, l := range g.Links {
		if l.Kind == LinkVXLAN {
			if first == nil {
				first = &g.Links[i]
			}
			joined[l.A.Host], joined[l.B.Host] = true, true
		}
	}
	if first == nil {
		return
	}
	bs := bus{label: "VXLAN " + g.tunnelDevicesText() + ", over the LAN", y: y, x0: 1e9, x1: -1e9, dashed: true, labelRight: true}
	right := -1e9
	for _, h := range g.Hosts {
		b, ok := lay.byName[h.Name]
		if !joined[h.Name] || !ok {
			continue
		}
		x := b.right() - 12
		lay.segments = append(lay.segments, segment{x1: x, y1: b.bottom(), x2: x, y2: y, dashed: true})
		lay.joints = append(lay.joints, point{x, y})
		bs.x0, bs.x1 = min(bs.x0, x), max(bs.x1, x)
		right = max(right, b.right())
	}
	// The line runs on past the last node, where no pod's veth crosses
	// its caption.
	bs.x1 = max(bs.x1, right+6)
	lay.buses = append(lay.buses, bs)
}

// drawPodLinks joins each pod to its node, the veth's ends written above
// the pod.
func (lay *layout) drawPodLinks(g *Graph) {
	for _, l := range g.Links {
		pod, node, ok := podLink(g, l)
		if !ok {
			continue
		}
		p, n := lay.byName[pod.Host], lay.byName[node.Host]
		x2 := p.x + podLinkX
		x1 := min(max(x2, n.x+12), n.right()-28)
		lay.segments = append(lay.segments, segment{
			x1: x1, y1: n.bottom(), x2: x2, y2: p.y,
			label: podLabel(pod, node), lx: x2 + 6, ly: p.y - 5,
		})
	}
}
