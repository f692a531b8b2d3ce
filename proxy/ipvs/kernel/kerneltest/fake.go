package kerneltest

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// Schedulers are the IPVS schedulers of a stock kernel (ip_vs_*.ko).
var Schedulers = []string{"rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed", "nq", "fo", "ovf", "mh", "twos"}

type vsState struct {
	vs  kernel.VirtualServer
	rss []kernel.RealServer
	// rsAt indexes rss by address and port.
	rsAt map[netip.AddrPort]int
	// at is its position in Fake.services.
	at int
}

// vsKey is what tells two virtual servers apart (VirtualServer.SameKey).
type vsKey struct {
	addr  netip.Addr
	port  uint16
	proto kernel.Protocol
}

func keyOf(vs kernel.VirtualServer) vsKey { return vsKey{vs.Address, vs.Port, vs.Protocol} }

// findRS is the position of rs in s.rss, or -1.
func (s *vsState) findRS(rs kernel.RealServer) int {
	if i, ok := s.rsAt[netip.AddrPortFrom(rs.Address, rs.Port)]; ok {
		return i
	}
	return -1
}

func (s *vsState) addRS(rs kernel.RealServer) {
	if s.rsAt == nil {
		s.rsAt = map[netip.AddrPort]int{}
	}
	s.rsAt[netip.AddrPortFrom(rs.Address, rs.Port)] = len(s.rss)
	s.rss = append(s.rss, rs)
}

func (s *vsState) deleteRS(i int) {
	s.rss = slices.Delete(s.rss, i, i+1)
	clear(s.rsAt)
	for j, r := range s.rss {
		s.rsAt[netip.AddrPortFrom(r.Address, r.Port)] = j
	}
}

type setState struct {
	typ kernel.SetType
	// family is Inet or Inet6 (Inet for a bitmap:port set).
	family  kernel.Family
	entries map[string]bool
}

// Fake is an in-memory kernel.Interface. The zero value is not usable; call
// New. It is safe for concurrent use.
type Fake struct {
	mu sync.Mutex

	// NoIPVS makes every IPVS call fail with kernel.ErrNoIPVS.
	NoIPVS bool
	// Schedulers the kernel has; New sets it to the package's Schedulers.
	Schedulers []string
	// Fail, when set, is asked before every state-changing call (named as
	// in Calls) and makes it fail with the error it returns.
	Fail func(call string) error
	// InUse marks ipsets an iptables rule refers to: DestroySet refuses
	// them, as the kernel does.
	InUse map[string]bool

	// Calls records every state-changing call that succeeded, as the
	// equivalent command ("ipvsadm -A -t 10.96.0.10:53 -s rr").
	Calls []string
	// counts counts every call of the Interface, reads and failed writes
	// included, by method name: what the real kernel would have been sent.
	counts kernel.Calls

	links   map[string][]netip.Addr // device → addresses
	dummies map[string]bool
	// services are the virtual servers in creation order, with nil where
	// one was deleted (compacted when they are half of it); byKey indexes
	// them, so that a sync of n services costs O(n), not O(n²), here.
	services []*vsState
	byKey    map[vsKey]*vsState
	deleted  int
	sets     map[string]*setState
	sysctls  map[string]string
	timeouts kernel.Timeouts
}

var _ kernel.Interface = (*Fake)(nil)

// New returns a fake with a loopback device (127.0.0.1), a device eth0
// holding nodeIPs, no IPVS services or ipsets, and the sysctls of a fresh
// namespace with ip_vs loaded.
func New(nodeIPs ...string) *Fake {
	f := &Fake{
		Schedulers: slices.Clone(Schedulers),
		InUse:      map[string]bool{},
		counts:     kernel.Calls{},
		links:      map[string][]netip.Addr{"lo": {netip.MustParseAddr("127.0.0.1")}},
		dummies:    map[string]bool{},
		byKey:      map[vsKey]*vsState{},
		sets:       map[string]*setState{},
		sysctls: map[string]string{
			"net/ipv4/ip_forward":                   "0",
			"net/ipv4/vs/conntrack":                 "0",
			"net/ipv4/vs/conn_reuse_mode":           "1",
			"net/ipv4/vs/expire_nodest_conn":        "0",
			"net/ipv4/vs/expire_quiescent_template": "0",
			"net/ipv4/conf/all/arp_ignore":          "0",
			"net/ipv4/conf/all/arp_announce":        "0",
		},
		timeouts: kernel.Timeouts{TCP: 900e9, TCPFin: 120e9, UDP: 300e9},
	}
	var eth0 []netip.Addr
	for _, s := range nodeIPs {
		eth0 = append(eth0, netip.MustParseAddr(s))
	}
	f.links["eth0"] = eth0
	return f
}

// SetLinkAddresses replaces a (non-dummy) device's addresses, creating it.
func (f *Fake) SetLinkAddresses(dev string, addrs ...netip.Addr) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.links[dev] = slices.Clone(addrs)
}

// SetConnections sets the connection counts of a real server, as traffic
// would; it reports whether the real server exists.
func (f *Fake) SetConnections(vs kernel.VirtualServer, rs kernel.RealServer, active, inactive int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.findVS(vs)
	if s == nil {
		return false
	}
	i := s.findRS(rs)
	if i < 0 {
		return false
	}
	s.rss[i].ActiveConn, s.rss[i].InactiveConn = active, inactive
	return true
}

// Counts returns how many times each method of kernel.Interface was
// called (reads, and writes that failed, included) since New or the last
// TakeCounts.
func (f *Fake) Counts() kernel.Calls {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.counts)
}

// TakeCounts returns Counts and starts counting from zero again.
func (f *Fake) TakeCounts() kernel.Calls {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.counts
	f.counts = kernel.Calls{}
	return c
}

// ResetCalls forgets the recorded calls.
func (f *Fake) ResetCalls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Calls = nil
}

// TakeCalls returns the recorded calls and forgets them.
func (f *Fake) TakeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.Calls
	f.Calls = nil
	return c
}

// change runs a state-changing call: the Fail hook, then fn, then the
// record.
func (f *Fake) change(call string, fn func() error) error {
	if f.Fail != nil {
		if err := f.Fail(call); err != nil {
			return fmt.Errorf("%s: %w", call, err)
		}
	}
	if err := fn(); err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	f.Calls = append(f.Calls, call)
	return nil
}

// --- IPVS ---

func (f *Fake) findVS(vs kernel.VirtualServer) *vsState { return f.byKey[keyOf(vs)] }

func (f *Fake) ipvsOK() error {
	if f.NoIPVS {
		return kernel.ErrNoIPVS
	}
	return nil
}

// VirtualServers implements kernel.IPVS.
func (f *Fake) VirtualServers() ([]kernel.VirtualServer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["VirtualServers"]++
	if err := f.ipvsOK(); err != nil {
		return nil, err
	}
	out := make([]kernel.VirtualServer, 0, len(f.byKey))
	for _, s := range f.services {
		if s != nil {
			out = append(out, s.vs)
		}
	}
	return out, nil
}

// RealServers implements kernel.IPVS.
func (f *Fake) RealServers(vs kernel.VirtualServer) ([]kernel.RealServer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["RealServers"]++
	if err := f.ipvsOK(); err != nil {
		return nil, err
	}
	s := f.findVS(vs)
	if s == nil {
		return nil, fmt.Errorf("ipvsadm -L -n %s: %w (No such service)", vs.Target(), unix.ESRCH)
	}
	return slices.Clone(s.rss), nil
}

func (f *Fake) checkVS(vs kernel.VirtualServer) error {
	if err := f.ipvsOK(); err != nil {
		return err
	}
	if !vs.Address.IsValid() || vs.Address.Is4In6() || vs.Address.Zone() != "" || vs.Protocol.Number() == 0 {
		return unix.EINVAL
	}
	if !slices.Contains(f.Schedulers, vs.Scheduler) {
		return fmt.Errorf("%w (Scheduler not found: ip_vs_%s)", unix.ENOENT, vs.Scheduler)
	}
	return nil
}

// AddVirtualServer implements kernel.IPVS.
func (f *Fake) AddVirtualServer(vs kernel.VirtualServer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["AddVirtualServer"]++
	return f.change("ipvsadm -A "+vs.Target()+" "+vs.Options(), func() error {
		if err := f.checkVS(vs); err != nil {
			return err
		}
		if f.findVS(vs) != nil {
			return fmt.Errorf("%w (Service already exists)", unix.EEXIST)
		}
		s := &vsState{vs: vs, at: len(f.services)}
		f.services = append(f.services, s)
		f.byKey[keyOf(vs)] = s
		return nil
	})
}

// UpdateVirtualServer implements kernel.IPVS.
func (f *Fake) UpdateVirtualServer(vs kernel.VirtualServer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["UpdateVirtualServer"]++
	return f.change("ipvsadm -E "+vs.Target()+" "+vs.Options(), func() error {
		if err := f.checkVS(vs); err != nil {
			return err
		}
		s := f.findVS(vs)
		if s == nil {
			return fmt.Errorf("%w (No such service)", unix.ESRCH)
		}
		s.vs = vs
		return nil
	})
}

// DeleteVirtualServer implements kernel.IPVS.
func (f *Fake) DeleteVirtualServer(vs kernel.VirtualServer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["DeleteVirtualServer"]++
	return f.change("ipvsadm -D "+vs.Target(), func() error {
		if err := f.ipvsOK(); err != nil {
			return err
		}
		s := f.findVS(vs)
		if s == nil {
			return fmt.Errorf("%w (No such service)", unix.ESRCH)
		}
		delete(f.byKey, keyOf(vs))
		f.services[s.at] = nil
		if f.deleted++; f.deleted*2 > len(f.services) {
			f.services = slices.DeleteFunc(f.services, func(s *vsState) bool { return s == nil })
			for i, s := range f.services {
				s.at = i
			}
			f.deleted = 0
		}
		return nil
	})
}

func (f *Fake) rsOp(verb string, vs kernel.VirtualServer, rs kernel.RealServer, fn func(s *vsState, i int) error) error {
	call := "ipvsadm " + verb + " " + vs.Target() + " " + rs.Describe()
	if verb == "-d" {
		call = "ipvsadm -d " + vs.Target() + " -r " + rs.Key()
	}
	return f.change(call, func() error {
		if err := f.ipvsOK(); err != nil {
			return err
		}
		s := f.findVS(vs)
		if s == nil {
			return fmt.Errorf("%w (Service not defined)", unix.ESRCH)
		}
		// A NAT destination is of its service's family.
		if rs.Address.Is4() != vs.Address.Is4() || rs.Address.Is4In6() || rs.Weight < 0 {
			return unix.EINVAL
		}
		return fn(s, s.findRS(rs))
	})
}

// AddRealServer implements kernel.IPVS.
func (f *Fake) AddRealServer(vs kernel.VirtualServer, rs kernel.RealServer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["AddRealServer"]++
	return f.rsOp("-a", vs, rs, func(s *vsState, i int) error {
		if i >= 0 {
			return fmt.Errorf("%w (Destination already exists)", unix.EEXIST)
		}
		rs.ActiveConn, rs.InactiveConn = 0, 0
		s.addRS(rs)
		return nil
	})
}

// UpdateRealServer implements kernel.IPVS.
func (f *Fake) UpdateRealServer(vs kernel.VirtualServer, rs kernel.RealServer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["UpdateRealServer"]++
	return f.rsOp("-e", vs, rs, func(s *vsState, i int) error {
		if i < 0 {
			return fmt.Errorf("%w (No such destination)", unix.ENOENT)
		}
		s.rss[i].Weight = rs.Weight
		return nil
	})
}

// DeleteRealServer implements kernel.IPVS.
func (f *Fake) DeleteRealServer(vs kernel.VirtualServer, rs kernel.RealServer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["DeleteRealServer"]++
	return f.rsOp("-d", vs, rs, func(s *vsState, i int) error {
		if i < 0 {
			return fmt.Errorf("%w (No such destination)", unix.ENOENT)
		}
		s.deleteRS(i)
		return nil
	})
}

// SetTimeouts implements kernel.IPVS.
func (f *Fake) SetTimeouts(t kernel.Timeouts) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["SetTimeouts"]++
	return f.change(fmt.Sprintf("ipvsadm --set %d %d %d", int(t.TCP.Seconds()), int(t.TCPFin.Seconds()), int(t.UDP.Seconds())), func() error {
		if err := f.ipvsOK(); err != nil {
			return err
		}
		if t.TCP != 0 {
			f.timeouts.TCP = t.TCP
		}
		if t.TCPFin != 0 {
			f.timeouts.TCPFin = t.TCPFin
		}
		if t.UDP != 0 {
			f.timeouts.UDP = t.UDP
		}
		return nil
	})
}

// Timeouts implements kernel.IPVS.
func (f *Fake) Timeouts() (kernel.Timeouts, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["Timeouts"]++
	return f.timeouts, f.ipvsOK()
}

// --- links ---

// EnsureDummy implements kernel.Links.
func (f *Fake) EnsureDummy(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["EnsureDummy"]++
	if f.dummies[name] {
		return nil
	}
	return f.change("ip link add "+name+" type dummy", func() error {
		if _, ok := f.links[name]; ok {
			return unix.EEXIST
		}
		f.dummies[name] = true
		f.links[name] = nil
		return nil
	})
}

// DeleteDummy implements kernel.Links.
func (f *Fake) DeleteDummy(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["DeleteDummy"]++
	if _, ok := f.links[name]; !ok {
		return nil
	}
	return f.change("ip link del "+name, func() error {
		if !f.dummies[name] {
			return fmt.Errorf("%s is not a dummy device", name)
		}
		delete(f.dummies, name)
		delete(f.links, name)
		return nil
	})
}

// Addresses implements kernel.Links.
func (f *Fake) Addresses(dev string) ([]netip.Addr, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["Addresses"]++
	addrs, ok := f.links[dev]
	out := slices.DeleteFunc(slices.Clone(addrs), netip.Addr.IsLinkLocalUnicast)
	slices.SortFunc(out, netip.Addr.Compare)
	return out, ok, nil
}

// AddAddress implements kernel.Links.
func (f *Fake) AddAddress(dev string, addr netip.Addr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["AddAddress"]++
	if slices.Contains(f.links[dev], addr) {
		return nil
	}
	return f.change(fmt.Sprintf("ip addr add %s/%d dev %s", addr, addr.BitLen(), dev), func() error {
		if _, ok := f.links[dev]; !ok {
			return fmt.Errorf("%w (Cannot find device %q)", unix.ENODEV, dev)
		}
		f.links[dev] = append(f.links[dev], addr)
		return nil
	})
}

// DelAddress implements kernel.Links.
func (f *Fake) DelAddress(dev string, addr netip.Addr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["DelAddress"]++
	i := slices.Index(f.links[dev], addr)
	if i < 0 {
		return nil
	}
	return f.change(fmt.Sprintf("ip addr del %s/%d dev %s", addr, addr.BitLen(), dev), func() error {
		f.links[dev] = slices.Delete(f.links[dev], i, i+1)
		return nil
	})
}

// NodeAddresses implements kernel.Links.
func (f *Fake) NodeAddresses(except string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["NodeAddresses"]++
	var out []netip.Addr
	for dev, addrs := range f.links {
		if dev == except {
			continue
		}
		for _, a := range addrs {
			if !a.IsLoopback() && !a.IsLinkLocalUnicast() {
				out = append(out, a)
			}
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return slices.Compact(out), nil
}

// --- ipsets ---

// ListSets implements kernel.IPSets.
func (f *Fake) ListSets() ([]kernel.SetInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["ListSets"]++
	var out []kernel.SetInfo
	for _, name := range slices.Sorted(maps.Keys(f.sets)) {
		out = append(out, kernel.SetInfo{Name: name, Type: f.sets[name].typ})
	}
	return out, nil
}

var setTypes = []kernel.SetType{kernel.HashIP, kernel.HashIPPort, kernel.HashIPPortIP, kernel.HashIPPortNet, kernel.BitmapPort}

// CreateSet implements kernel.IPSets. The call is recorded as "ipset
// create NAME TYPE", with " family inet6" for an IPv6 hash set.
func (f *Fake) CreateSet(name string, typ kernel.SetType, family kernel.Family) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["CreateSet"]++
	if typ == kernel.BitmapPort {
		family = "" // a port bitmap has no address family
	}
	family = family.OrInet()
	if s, ok := f.sets[name]; ok && s.typ == typ && s.family == family {
		return nil
	}
	call := "ipset create " + name + " " + string(typ)
	if family == kernel.Inet6 {
		call += " family inet6"
	}
	return f.change(call, func() error {
		if s, ok := f.sets[name]; ok {
			return fmt.Errorf("a set of that name exists with type %s, family %s", s.typ, s.family)
		}
		if !slices.Contains(setTypes, typ) {
			return fmt.Errorf("the kernel has no ipset type %s", typ)
		}
		if len(name) > 31 {
			return fmt.Errorf("set name longer than 31 characters")
		}
		f.sets[name] = &setState{typ: typ, family: family, entries: map[string]bool{}}
		return nil
	})
}

// Entries implements kernel.IPSets.
func (f *Fake) Entries(name string) (kernel.SetType, []string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["Entries"]++
	s, ok := f.sets[name]
	if !ok {
		return "", nil, false, nil
	}
	return s.typ, slices.Sorted(maps.Keys(s.entries)), true, nil
}

func (f *Fake) entryOp(verb, name string, typ kernel.SetType, entry string, fn func(s *setState, canonical string)) error {
	return f.change("ipset "+verb+" "+name+" "+entry, func() error {
		s, ok := f.sets[name]
		if !ok {
			return fmt.Errorf("the set does not exist")
		}
		if s.typ != typ {
			return fmt.Errorf("the set has type %s, not %s", s.typ, typ)
		}
		e, err := kernel.ParseEntry(typ, entry)
		if err != nil {
			return err
		}
		if typ != kernel.BitmapPort && kernel.FamilyOf(e.IP) != s.family {
			return fmt.Errorf("the entry's address is not of the set's family %s", s.family)
		}
		fn(s, e.Format(typ))
		return nil
	})
}

// AddEntry implements kernel.IPSets.
func (f *Fake) AddEntry(name string, typ kernel.SetType, entry string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["AddEntry"]++
	return f.entryOp("add", name, typ, entry, func(s *setState, e string) { s.entries[e] = true })
}

// DelEntry implements kernel.IPSets.
func (f *Fake) DelEntry(name string, typ kernel.SetType, entry string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["DelEntry"]++
	return f.entryOp("del", name, typ, entry, func(s *setState, e string) { delete(s.entries, e) })
}

// DestroySet implements kernel.IPSets.
func (f *Fake) DestroySet(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["DestroySet"]++
	if _, ok := f.sets[name]; !ok {
		return nil
	}
	return f.change("ipset destroy "+name, func() error {
		if f.InUse[name] {
			return fmt.Errorf("the set is still used by an iptables rule")
		}
		delete(f.sets, name)
		return nil
	})
}

// --- sysctls ---

// Sysctl implements kernel.Sysctls.
func (f *Fake) Sysctl(key string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["Sysctl"]++
	v, ok := f.sysctls[key]
	if !ok || (f.NoIPVS && strings.HasPrefix(key, "net/ipv4/vs/")) {
		return "", fmt.Errorf("sysctl %s: %w", strings.ReplaceAll(key, "/", "."), unix.ENOENT)
	}
	return v, nil
}

// SetSysctl implements kernel.Sysctls.
func (f *Fake) SetSysctl(key, value string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["SetSysctl"]++
	if v, ok := f.sysctls[key]; ok && v == value {
		return nil
	}
	return f.change("sysctl -w "+strings.ReplaceAll(key, "/", ".")+"="+value, func() error {
		if _, ok := f.sysctls[key]; !ok || (f.NoIPVS && strings.HasPrefix(key, "net/ipv4/vs/")) {
			return unix.ENOENT
		}
		f.sysctls[key] = value
		return nil
	})
}
