package hostprog

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// A site is where a program is executed: a call of exec.Command and
// friends, or of one of svclab's wrappers around them.
type site struct {
	pos      token.Position
	fn       string   // enclosing function, "Recv.Name" or "Name"
	programs []string // resolved program names
	dynamic  string   // what could not be resolved, "" when all was
}

// execCalls are the calls whose argument at the index is the program (or,
// for a spread argument, the argv whose first element is). Matched on the
// call as written: package-qualified, or a method by the receiver's last
// name (l.Command, g.lab.Command…), or a function of the same package.
var execCalls = map[string]int{
	"exec.Command":         0,
	"exec.CommandContext":  1,
	"exec.LookPath":        0,
	"cmdrun.Command":       0,
	"network.NetnsCommand": 1, // (ns, argv…)
	"NetnsCommand":         1, // the same, inside labs/netns/network
	"d.NetnsCommand":       0, // dockerhost.Daemon: argv in svclab's dockerd namespace
	"l.Command":            1, // labs.Lab and netnslab.Lab: (host, args…) in a lab namespace
	"lab.Command":          1,
	"l.Run":                1,
	"lab.Run":              1,
	"Lab.Command":          1,  // tools/workshop (r.Lab.Command): a lesson's (host, argv…)
	"hostCommand":          -1, // labs/kind/cni: (ctx, hostRoot, argv…), a kind node's program (chroot)
	"containerExec":        -1,
	"d.Command":            -1, // docker SUBCOMMAND: the program is docker
	"n.Command":            -1, // a kind node's program, run with docker exec
	"t.onNode":             -1, // svclab in a kind node's agent pod
}

// dynamicSites are the executions whose program the scan cannot resolve
// from literals, keyed "path:Func": what they run, or why it is no host
// program. A new such site fails the test until it is listed here.
var dynamicSites = map[string]struct {
	programs []string
	why      string
}{
	// Wrappers: the program comes from their callers, whose calls are
	// matched through execCalls.
	"labs/netns/exec.go:Lab.Command":                              {why: "wrapper (l.Command, lab.Command)"},
	"labs/netns/network/netns.go:NetnsCommand":                    {why: "wrapper (network.NetnsCommand)"},
	"labs/agents/process/start.go:Start":                          {why: "wrapper (process.Spec{Args: …})"},
	"internal/cmdrun/cmdrun.go:Cmd.Exec":                          {why: "wrapper (cmdrun.Command)"},
	"labs/kind/internal/dockerhost/daemon.go:Daemon.NetnsCommand": {why: "wrapper (d.NetnsCommand)"},
	"scenarios/kit/netnslab/lab.go:Lab.Run":                       {why: "wrapper (l.Run, lab.Run)"},
	"tools/workshop/run.go:Runner.runHost":                        {programs: []string{Bridge, Cat, Conntrack, IP, IPSet, IPTables, IPTablesSave, IPVSAdm, NFT, Sh}, why: "a lesson's host commands: the lesson decoder accepts only workshop.HostPrograms"},
	"tools/workshop/run.go:Runner.runSvclab":                      {why: "svclab itself: a lesson's svclab actions (--lab added)"},
	"internal/hostprog/ensure.go:lookPath":                        {why: "Ensure looks the declared programs up"},
	"internal/hostprog/ensure.go:run":                             {programs: []string{AptGet}, why: "Ensure's apt-get update and install (Host.Run's default)"},

	// Programs chosen at run time.
	"internal/vm/qemu.go:qemuCommand":                           {programs: []string{QEMU}, why: "qemuBinary's path from LookPath"},
	"internal/vm/rootfs.go:depmod":                              {programs: []string{Depmod}, why: "the guest's ld.so running its kmod, else the host's depmod"},
	"tools/bench/probe.go:probe.found":                          {programs: []string{IPTables, IPTablesLegacy, IPTablesNFT, NFT, IPVSAdm}, why: "the mode's probe (probe.command): iptables -S of the backend, nft get element, ipvsadm -Ln"},
	"tools/bench/probe.go:probe.count":                          {programs: []string{IPTablesSave, IPTablesLegacySave, IPTablesNFTSave, NFT, IPVSAdm}, why: "the mode's listing: iptables-save of the backend, nft list table, ipvsadm -Ln"},
	"labs/netns/network/step_iptables.go:IptablesRestore.apply": {programs: []string{IPTablesRestore, IPTablesLegacyRestore, IPTablesNFTRestore, IP6TablesRestore, IP6TablesLegacyRestore, IP6TablesNFTRestore}, why: "the lab backend's RestoreCommand() or RestoreCommandIPv6() (the overlays' IPv6 masquerade rules)"},
	"proxy/iptables/kernel/execrunner.go:ExecRunner.command":    {programs: []string{IPTables, IPTablesSave, IPTablesRestore, IPTablesLegacy, IPTablesLegacySave, IPTablesLegacyRestore, IPTablesNFT, IPTablesNFTSave, IPTablesNFTRestore, IP6Tables, IP6TablesSave, IP6TablesRestore, IP6TablesLegacy, IP6TablesLegacySave, IP6TablesLegacyRestore, IP6TablesNFT, IP6TablesNFTSave, IP6TablesNFTRestore}, why: "ExecRunner.binary(tool): the backend's and the family's name"},
	"proxy/iptables/kernel/versioncache.go:cachedVersion":       {programs: []string{IPTables, IPTablesLegacy, IPTablesNFT, IP6Tables, IP6TablesLegacy, IP6TablesNFT}, why: "looks up (never runs) the binary ExecRunner.detectVersion asks: ExecRunner.binary(\"iptables\") of the backend and family"},
	"scenarios/kit/netnslab/iptables.go:Lab.IPTablesSave":       {programs: []string{IPTablesSave, IPTablesLegacySave, IPTablesNFTSave, IP6TablesSave, IP6TablesLegacySave, IP6TablesNFTSave}, why: "the lab backend's Command()+\"-save\", or its ip6tables for an IPv6 family"},
	"labs/netns/trace/collect.go:saveAll":                       {programs: []string{IPTablesSave, IPTablesLegacySave, IPTablesNFTSave}, why: "svclab trace reads counters with the lab backend's Command()+\"-save\""},
	"labs/kind/internal/nodeimage/gobuild.go:stagingModules":    {programs: []string{Go}, why: "the Go toolchain found by goBinary"},
	"labs/kind/internal/nodeimage/moddir.go:moduleDir":          {programs: []string{Go}, why: "the Go toolchain found by goBinary"},
	"labs/kind/internal/nodeimage/gobuild.go:goProgram.build":   {programs: []string{Go}, why: "buildCommand: the Go toolchain found by goBinary"},

	// No host programs: svclab itself, what svclab built, a guest's or a
	// kind node's programs, the user's command.
	"labs/netns/supervised.go:Lab.startSupervised":               {why: "svclab itself (opts.Binary) as the supervisor of a node's proxy or a pod's server"},
	"labs/agents/process/supervise.go:supervisor.runContainer":   {why: "the supervised process: svclab itself as a node's proxy or a pod's server"},
	"labs/netns/traffic.go:Lab.Traffic":                          {why: "svclab itself (opts.Binary) as the traffic client"},
	"tools/bench/traffic_client.go:trafficLab.runTraffic":        {why: "svclab itself (the lab's binary) as bench traffic's client, under ip netns exec (lab.Command)"},
	"scenarios/kit/netnslab/labtarget.go:labWorkspace.ProxyMode": {why: "svclab itself (the lab's binary)"},
	"scenarios/kit/netnslab/labproxy.go:Lab.proxyFacts":          {why: "svclab itself (the lab's binary: node get /proxyMode, the ConfigMap)"},
	"scenarios/kit/netnslab/more.go:labWorkspace.Lookup":         {why: "svclab itself (the lab's binary: svclab lookup in a pod)"},
	"internal/vm/rootfs.go:linkApplets":                          {why: "the guest root's busybox, by its path"},
	"labs/kind/internal/nodeimage/build.go:build.kubeadmImages":  {why: "kubeadm, just built into the cache, by its path"},
	"tools/cli/conformance.go:runSuite":                          {why: "bin/svclab-conformance.test, svclab's own conformance suite"},
	"labs/kind/cni/plugin.go:runIPAM":                            {why: "the CNI IPAM plugin from CNI_PATH, inside a kind node"},
	"labs/kind/cni/masq.go:hostCommand":                          {why: "a kind node's own program, chrooted into its root (hostCommand's calls name node paths)"},
	"tools/cli/node.go:newNodeRun":                               {why: "`svclab node run -- CMD`: the user's command, in a kind node's root"},
	"tools/cli/exec.go:newExec":                                  {why: "`svclab exec HOST -- CMD`: the user's command in a lab namespace"},
	"tools/cli/bench_sync.go:newBenchSync":                       {why: "svclab-bench-sync, built beside svclab by make bench-sync (tools/upstream), by its path"},
	"tools/upstream/syncbench.go:startSyncWorker":                {why: "svclab-bench-sync itself (/proc/self/exe) as a worker; in its tests, the test binary"},
	"tools/upstream/syncbench.go:iptablesPath":                   {programs: []string{IPTablesLegacy, IPTablesLegacySave, IPTablesLegacyRestore, IPTablesNFT, IPTablesNFTSave, IPTablesNFTRestore}, why: "LookPath of --iptables legacy|nft's binaries, linked into the workers' PATH"},
}

// notLookedUp says why a resolved program is not one of the host's: svclab
// itself, or a program named by its path (a guest's or a node's file, or
// one svclab built), which is never looked up in PATH.
func notLookedUp(name string) bool {
	return name == "svclab" || strings.Contains(name, "/")
}

// moduleRoot is the directory of go.mod above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// pkgFiles is one package directory's parsed non-test files.
type pkgFiles struct {
	files []*ast.File
	funcs map[string]*ast.FuncDecl // top-level functions by name
	vals  map[string]ast.Expr      // top-level var and const values by name
}

// scanModule parses every non-test .go file under root and returns where
// programs are executed.
func scanModule(t *testing.T, root string) []site {
	t.Helper()
	fset := token.NewFileSet()
	pkgs := map[string]*pkgFiles{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "_out" || n == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		p := pkgs[dir]
		if p == nil {
			p = &pkgFiles{funcs: map[string]*ast.FuncDecl{}, vals: map[string]ast.Expr{}}
			pkgs[dir] = p
		}
		p.files = append(p.files, f)
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					p.funcs[d.Name.Name] = d
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if vs, ok := spec.(*ast.ValueSpec); ok {
						for i, n := range vs.Names {
							if i < len(vs.Values) {
								p.vals[n.Name] = vs.Values[i]
							}
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	consts := hostprogConsts(pkgs[filepath.Join(root, "internal", "hostprog")])
	var sites []site
	for _, p := range pkgs {
		for _, f := range p.files {
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				r := &resolver{pkg: p, fn: fd, consts: consts}
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.CallExpr:
						if s, ok := r.execSite(n); ok {
							s.pos = fset.Position(n.Pos())
							s.fn = funcName(fd)
							sites = append(sites, s)
						}
					case *ast.CompositeLit:
						// process.Spec{Args: …} and `ip netns exec NS PROG` argv.
						if s, ok := r.argvLiteral(n); ok {
							s.pos = fset.Position(n.Pos())
							s.fn = funcName(fd)
							sites = append(sites, s)
						}
					}
					return true
				})
			}
		}
	}
	for i := range sites {
		if rel, err := filepath.Rel(root, sites[i].pos.Filename); err == nil {
			sites[i].pos.Filename = rel
		}
	}
	sort.Slice(sites, func(i, j int) bool {
		a, b := sites[i].pos, sites[j].pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Line < b.Line
	})
	return sites
}

// hostprogConsts maps this package's constant names to their values, so
// that call sites may use hostprog.Debootstrap instead of a literal.
func hostprogConsts(p *pkgFiles) map[string]string {
	m := map[string]string{}
	if p == nil {
		return m
	}
	for name, v := range p.vals {
		if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			s, _ := strconv.Unquote(lit.Value)
			m[name] = s
		}
	}
	return m
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// callee is the call as written: "exec.Command", "l.Command" (the
// receiver's last name), "runCmd".
func callee(call *ast.CallExpr) string {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name
	case *ast.SelectorExpr:
		switch x := fn.X.(type) {
		case *ast.Ident:
			return x.Name + "." + fn.Sel.Name
		case *ast.SelectorExpr:
			return x.Sel.Name + "." + fn.Sel.Name
		}
	}
	return ""
}

// resolver resolves expressions to program names inside one function.
type resolver struct {
	pkg    *pkgFiles
	fn     *ast.FuncDecl
	consts map[string]string
	depth  int
}

func (r *resolver) execSite(call *ast.CallExpr) (site, bool) {
	idx, ok := execCalls[callee(call)]
	if !ok || idx < 0 || len(call.Args) <= idx {
		return site{}, false
	}
	arg := call.Args[idx]
	var progs []string
	var dyn string
	if call.Ellipsis.IsValid() && idx == len(call.Args)-1 {
		progs, dyn = r.argv(arg)
	} else {
		progs, dyn = r.program(arg)
		if dyn == "" && len(progs) == 1 && progs[0] == IP && len(call.Args) > idx+4 {
			// ip netns exec NS PROG…
			if a, b := r.literal(call.Args[idx+1]), r.literal(call.Args[idx+2]); a == "netns" && b == "exec" {
				more, d := r.program(call.Args[idx+4])
				progs, dyn = append(progs, more...), d
			}
		}
		if dyn == "" && len(call.Args) == idx+2 && call.Ellipsis.IsValid() && len(progs) == 1 && progs[0] == IP {
			more, d := r.afterNetnsExec(call.Args[idx+1])
			progs, dyn = append(progs, more...), d
		}
	}
	return site{programs: progs, dynamic: dyn}, true
}

// argvLiteral finds process.Spec{Args: …} literals.
func (r *resolver) argvLiteral(cl *ast.CompositeLit) (site, bool) {
	sel, ok := cl.Type.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Spec" {
		return site{}, false
	}
	if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "process" {
		return site{}, false
	}
	for _, e := range cl.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Args" {
				progs, dyn := r.argv(kv.Value)
				return site{programs: progs, dynamic: dyn}, true
			}
		}
	}
	return site{}, false
}

func (r *resolver) literal(e ast.Expr) string {
	if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
		s, _ := strconv.Unquote(lit.Value)
		return s
	}
	return ""
}

// program resolves a string expression naming a program.
func (r *resolver) program(e ast.Expr) ([]string, string) {
	if r.depth > 8 {
		return nil, "too deep"
	}
	r.depth++
	defer func() { r.depth-- }()
	switch e := e.(type) {
	case *ast.BasicLit:
		if s := r.literal(e); s != "" {
			return []string{s}, ""
		}
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok && x.Name == "hostprog" {
			if v, ok := r.consts[e.Sel.Name]; ok {
				return []string{v}, ""
			}
		}
	case *ast.Ident:
		if vs := r.local(e.Name); len(vs) > 0 {
			return each(vs, r.program)
		}
		if v, ok := r.pkg.vals[e.Name]; ok {
			return r.program(v)
		}
	case *elems:
		return each(e.list, r.program)
	case *ast.IndexExpr:
		if lit, ok := e.Index.(*ast.BasicLit); ok && lit.Value == "0" {
			return r.argv(e.X)
		}
	}
	return nil, exprString(e)
}

// argv resolves a []string expression whose first element is the program;
// `ip netns exec NS PROG…` gives ip and PROG.
func (r *resolver) argv(e ast.Expr) ([]string, string) {
	if r.depth > 8 {
		return nil, "too deep"
	}
	r.depth++
	defer func() { r.depth-- }()
	switch e := e.(type) {
	case *ast.CompositeLit:
		if len(e.Elts) == 0 {
			return nil, exprString(e)
		}
		if _, ok := e.Elts[0].(*ast.CompositeLit); ok { // [][]string: each is an argv
			var all []string
			for _, el := range e.Elts {
				p, d := r.argv(el)
				if d != "" {
					return all, d
				}
				all = append(all, p...)
			}
			return all, ""
		}
		progs, dyn := r.program(e.Elts[0])
		if len(e.Elts) == 3 && dyn == "" && r.literal(e.Elts[0]) == "netns" && r.literal(e.Elts[1]) == "exec" {
			return nil, "" // the tail of ip's argv, see afterNetnsExec
		}
		if dyn == "" && len(progs) == 1 && progs[0] == IP && len(e.Elts) > 4 && r.literal(e.Elts[1]) == "netns" && r.literal(e.Elts[2]) == "exec" {
			more, d := r.program(e.Elts[4])
			return append(progs, more...), d
		}
		return progs, dyn
	case *ast.CallExpr:
		if id, ok := e.Fun.(*ast.Ident); ok {
			if id.Name == "append" && len(e.Args) > 0 {
				progs, dyn := r.argv(e.Args[0])
				if dyn == "" && len(progs) == 1 && progs[0] == IP && len(e.Args) >= 2 {
					if _, d := r.afterNetnsExec(e.Args[0]); d != "" {
						if e.Ellipsis.IsValid() && len(e.Args) == 2 {
							return progs, d // the program comes with the spread argv
						}
						more, d := r.program(e.Args[1])
						return append(progs, more...), d
					}
				}
				return progs, dyn
			}
			if fd, ok := r.pkg.funcs[id.Name]; ok {
				return r.returned(fd)
			}
		}
	case *ast.Ident:
		if vs := r.local(e.Name); len(vs) > 0 {
			return each(vs, r.argv)
		}
		if v, ok := r.pkg.vals[e.Name]; ok {
			return r.argv(v)
		}
	case *elems:
		return each(e.list, r.argv)
	}
	return nil, exprString(e)
}

// afterNetnsExec: argv ending in `netns exec NS` spread with the program's
// argv: the program comes from the caller, so the site is a wrapper.
func (r *resolver) afterNetnsExec(e ast.Expr) ([]string, string) {
	if c, ok := e.(*ast.CallExpr); ok && len(c.Args) > 0 {
		if f, ok := c.Fun.(*ast.Ident); ok && f.Name == "append" {
			e = c.Args[0]
		}
	}
	if id, ok := e.(*ast.Ident); ok {
		return each(r.local(id.Name), r.afterNetnsExec)
	}
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, ""
	}
	n := len(cl.Elts)
	if n >= 3 && r.literal(cl.Elts[n-3]) == "netns" && r.literal(cl.Elts[n-2]) == "exec" {
		return nil, "the program after ip netns exec"
	}
	return nil, ""
}

// returned resolves the argv a same-package function returns.
func (r *resolver) returned(fd *ast.FuncDecl) ([]string, string) {
	if fd.Body == nil {
		return nil, fd.Name.Name + "()"
	}
	sub := &resolver{pkg: r.pkg, fn: fd, consts: r.consts, depth: r.depth}
	var all []string
	dyn := ""
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		if ret, ok := n.(*ast.ReturnStmt); ok && len(ret.Results) > 0 {
			p, d := sub.argv(ret.Results[0])
			all = append(all, p...)
			if d != "" && dyn == "" {
				dyn = d
			}
		}
		return true
	})
	return all, dyn
}

// local finds the values assigned to name in the function (:=, =, var),
// or, for a `for _, name := range X`, X's elements.
func (r *resolver) local(name string) []ast.Expr {
	var found []ast.Expr
	ast.Inspect(r.fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				if id, ok := lhs.(*ast.Ident); ok && id.Name == name && len(n.Rhs) == len(n.Lhs) {
					if c, ok := n.Rhs[i].(*ast.CallExpr); ok {
						if f, ok := c.Fun.(*ast.Ident); ok && f.Name == "append" && len(c.Args) > 0 {
							if a, ok := c.Args[0].(*ast.Ident); ok && a.Name == name {
								continue // args = append(args, "-c"): same program
							}
						}
					}
					found = append(found, n.Rhs[i])
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if id.Name == name && i < len(n.Values) {
					found = append(found, n.Values[i])
				}
			}
		case *ast.RangeStmt:
			if id, ok := n.Value.(*ast.Ident); ok && id.Name == name {
				found = append(found, r.elements(n.X))
			}
		}
		return true
	})
	return found
}

// elements is what ranging over x yields: a composite literal's elements
// (a map's values), as one elems.
func (r *resolver) elements(x ast.Expr) ast.Expr {
	if id, ok := x.(*ast.Ident); ok {
		if v, ok := r.pkg.vals[id.Name]; ok {
			x = v
		} else if vs := r.local(id.Name); len(vs) == 1 {
			x = vs[0]
		}
	}
	cl, ok := x.(*ast.CompositeLit)
	if !ok {
		return x
	}
	e := &elems{}
	for _, el := range cl.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			el = kv.Value
		}
		e.list = append(e.list, el)
	}
	return e
}

// elems are the values a range variable takes.
type elems struct {
	ast.Expr
	list []ast.Expr
}

// each resolves every expression with f: the union of programs, the first
// unresolved part.
func each(es []ast.Expr, f func(ast.Expr) ([]string, string)) ([]string, string) {
	var all []string
	dyn := ""
	for _, e := range es {
		p, d := f(e)
		all = append(all, p...)
		if d != "" && dyn == "" {
			dyn = d
		}
	}
	return all, dyn
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.CallExpr:
		return exprString(e.Fun) + "(…)"
	case *ast.IndexExpr:
		return exprString(e.X) + "[" + exprString(e.Index) + "]"
	case *ast.BasicLit:
		return e.Value
	}
	return "an expression"
}

// TestEveryExecutedProgramIsDeclared fails, naming file:line, for a
// program the code executes that is not in Programs, and for an execution
// whose program it cannot resolve that dynamicSites does not explain.
func TestEveryExecutedProgramIsDeclared(t *testing.T) {
	sites := scanModule(t, moduleRoot(t))
	if len(sites) < 30 {
		t.Fatalf("found only %d executions: the scan is broken", len(sites))
	}
	usedDynamic := map[string]bool{}
	for _, s := range sites {
		key := s.pos.Filename + ":" + s.fn
		progs := s.programs
		if s.dynamic != "" {
			d, ok := dynamicSites[key]
			if !ok {
				t.Errorf("%s:%d (%s): runs a program the scan cannot resolve (%s): use a literal or a hostprog constant, or list %q in dynamicSites with what it runs", s.pos.Filename, s.pos.Line, s.fn, s.dynamic, key)
				continue
			}
			usedDynamic[key] = true
			progs = append(progs, d.programs...)
		}
		for _, p := range progs {
			if _, ok := Lookup(p); !ok && !notLookedUp(p) {
				t.Errorf("%s:%d (%s): runs %q, which is not declared in hostprog.Programs (add it with its Debian package)", s.pos.Filename, s.pos.Line, s.fn, p)
			}
		}
		if testing.Verbose() {
			t.Logf("%s:%d %s: %v %s", s.pos.Filename, s.pos.Line, s.fn, progs, s.dynamic)
		}
	}
	for key := range dynamicSites {
		if !usedDynamic[key] {
			t.Errorf("dynamicSites[%q]: no unresolved execution there any more: remove the entry", key)
		}
	}
}

// TestScanFindsPrograms runs the scan on testdata/scan, a module whose
// files execute programs in each way the scan knows.
func TestScanFindsPrograms(t *testing.T) {
	got := map[string]bool{}
	dynamic := map[string]bool{}
	for _, s := range scanModule(t, filepath.Join("testdata", "scan")) {
		for _, p := range s.programs {
			got[p] = true
		}
		if s.dynamic != "" {
			dynamic[s.fn] = true
		}
	}
	for _, want := range []string{"literal", "ctx-literal", "lookpath", "cmdrun", "netns-exec", "in-ns", "appended",
		"returned", "ranged-a", "ranged-b", "mapped", "reassigned-a", "reassigned-b", "constant", "spec", "shown", Debootstrap} {
		if !got[want] {
			t.Errorf("the scan missed %q (found %v)", want, got)
		}
	}
	if !dynamic["fromParameter"] {
		t.Errorf("the scan did not report fromParameter's program as unresolved: %v", dynamic)
	}
	if got["subcommand"] {
		t.Errorf("d.Command's docker subcommand was taken for a program")
	}
}
