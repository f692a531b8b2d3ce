package kubeprint

import (
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
)

// Template formats of -o: kubectl's -o jsonpath=TEMPLATE,
// jsonpath-as-json=TEMPLATE and custom-columns=HEADER:PATH,….
const (
	OutputJSONPath       = "jsonpath"
	OutputJSONPathAsJSON = "jsonpath-as-json"
	OutputCustomColumns  = "custom-columns"
)

// templateFormat splits an -o value of a template format into the format
// and its argument; ok is false for any other -o value.
func templateFormat(output string) (format, arg string, ok bool) {
	for _, f := range []string{OutputJSONPath, OutputJSONPathAsJSON, OutputCustomColumns} {
		if output == f || strings.HasPrefix(output, f+"=") {
			return f, strings.TrimPrefix(output[len(f):], "="), true
		}
	}
	return "", "", false
}

// templatePrinter is the cli-runtime printer of an -o jsonpath=… or
// jsonpath-as-json=… as kubectl's JSONPathPrintFlags makes it (missing
// keys print nothing; genericclioptions itself is not imported: it brings
// kustomize and the REST client),
// or the custom-columns printer of an -o custom-columns=….
func templatePrinter(output string, noHeaders bool) (printers.ResourcePrinter, error) {
	format, arg, _ := templateFormat(output)
	if arg == "" {
		if format == OutputCustomColumns {
			return nil, fmt.Errorf("custom-columns format specified but no custom columns given")
		}
		return nil, fmt.Errorf("template format specified but no template given")
	}
	if format == OutputCustomColumns {
		return newCustomColumns(arg, noHeaders)
	}
	p, err := printers.NewJSONPathPrinter(arg)
	if err != nil {
		return nil, fmt.Errorf("error parsing jsonpath %s, %v", arg, err)
	}
	p.AllowMissingKeys(true) // kubectl's --allow-missing-template-keys default
	p.EnableJSONOutput(format == OutputJSONPathAsJSON)
	return p, nil
}

// relaxedPath matches what kubectl's custom-columns take as a path:
// metadata.name, .metadata.name, {metadata.name} or {.metadata.name}.
var relaxedPath = regexp.MustCompile(`^\{\.?([^{}]+)\}$|^\.?([^{}]+)$`)

// customColumns is kubectl's custom-columns printer (k8s.io/kubectl
// pkg/cmd/get/customcolumn.go), which is not in cli-runtime: a column per
// HEADER:PATH, each cell the path's values joined by commas, or <none>.
type customColumns struct {
	headers   []string
	paths     []*jsonpath.JSONPath
	noHeaders bool
}

// newCustomColumns parses kubectl's HEADER:PATH,HEADER:PATH spec.
func newCustomColumns(spec string, noHeaders bool) (*customColumns, error) {
	c := &customColumns{noHeaders: noHeaders}
	for i, part := range strings.Split(spec, ",") {
		header, path, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", part)
		}
		m := relaxedPath.FindStringSubmatch(path)
		if m == nil {
			return nil, fmt.Errorf("custom-columns %s: unexpected path string %q, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'", header, path)
		}
		field := m[1]
		if field == "" {
			field = m[2]
		}
		jp := jsonpath.New(fmt.Sprintf("column%d", i+1)).AllowMissingKeys(true)
		if err := jp.Parse("{." + field + "}"); err != nil {
			return nil, fmt.Errorf("custom-columns %s: %w", header, err)
		}
		c.headers, c.paths = append(c.headers, header), append(c.paths, jp)
	}
	return c, nil
}

// PrintObj prints obj, or each item of a list, as a row.
func (c *customColumns) PrintObj(obj runtime.Object, out io.Writer) error {
	w := printers.GetNewTabWriter(out)
	if !c.noHeaders {
		fmt.Fprintln(w, strings.Join(c.headers, "\t"))
	}
	objs := []runtime.Object{obj}
	if apimeta.IsListType(obj) {
		var err error
		if objs, err = apimeta.ExtractList(obj); err != nil {
			return err
		}
	}
	for _, o := range objs {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return err
		}
		cells := make([]string, len(c.paths))
		for i, jp := range c.paths {
			results, err := jp.FindResults(content)
			if err != nil {
				return err
			}
			cells[i] = joinResults(results)
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	return w.Flush()
}

// joinResults is a cell: the values found, comma-separated, or <none>.
func joinResults(results [][]reflect.Value) string {
	var vals []string
	for _, r := range results {
		for _, v := range r {
			vals = append(vals, fmt.Sprint(v.Interface()))
		}
	}
	if len(vals) == 0 {
		return "<none>"
	}
	return strings.Join(vals, ",")
}
