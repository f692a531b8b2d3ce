package conformance

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestLabelsAreTheSpecs: SpecLabels (what --label-filter completes) lists
// exactly the labels the package's specs give in their Label(…) calls
// (string literals, or the package's Label* constants), each once, in
// sorted order.
func TestLabelsAreTheSpecs(t *testing.T) {
	used := specLabels(t)
	names := LabelNames()
	if !sort.StringsAreSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("SpecLabels %v: want each once, sorted", names)
	}
	for _, l := range SpecLabels {
		if _, ok := used[l.Name]; !ok {
			t.Errorf("SpecLabels lists %q, which no spec carries: drop it", l.Name)
		}
		if strings.TrimSpace(l.About) == "" {
			t.Errorf("label %q: no About", l.Name)
		}
	}
	for name, where := range used {
		if !slices.Contains(names, name) {
			t.Errorf("%s: label %q is not in SpecLabels (labels.go): add it, with what it selects", where, name)
		}
	}
}

// specLabels are the labels of the Label(…) calls in the package's Go
// files (tests excluded), each with where it is first given.
func specLabels(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var parsed []*ast.File
	consts := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							if v, ok := stringLit(vs.Values[i]); ok {
								consts[n.Name] = v
							}
						}
					}
				}
			}
		}
	}
	used := map[string]string{}
	for _, f := range parsed {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !isLabelCall(call.Fun) {
				return true
			}
			for _, arg := range call.Args {
				v, ok := stringLit(arg)
				if id, isIdent := arg.(*ast.Ident); !ok && isIdent {
					v, ok = consts[id.Name]
				}
				if !ok {
					t.Errorf("%s: a label that is neither a string nor a constant of the package", fset.Position(arg.Pos()))
					continue
				}
				if _, seen := used[v]; !seen {
					used[v] = fset.Position(arg.Pos()).String()
				}
			}
			return true
		})
	}
	if len(used) == 0 {
		t.Fatal("no Label(…) call found: the specs moved?")
	}
	return used
}

// isLabelCall reports whether fun is ginkgo's Label (dot-imported, or
// through the package name).
func isLabelCall(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name == "Label"
	case *ast.SelectorExpr:
		return f.Sel.Name == "Label"
	}
	return false
}

// stringLit is e's value when e is a string literal.
func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(lit.Value)
	return v, err == nil
}
