package kubeprint

import (
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
)

// Output formats (kubectl's -o).
const (
	OutputTable = ""
	OutputWide  = "wide"
	OutputJSON  = "json"
	OutputYAML  = "yaml"
	OutputName  = "name"
)

// Outputs are the -o values Print takes, for completion as kubectl
// completes them (the template formats want "=TEMPLATE" after them).
var Outputs = []string{OutputWide, OutputJSON, OutputYAML, OutputName, OutputJSONPath, OutputJSONPathAsJSON, OutputCustomColumns}

// Options say how Print prints.
type Options struct {
	// Output is one of the Output constants.
	Output string
	// WithNamespace adds the NAMESPACE column first (kubectl get -A).
	WithNamespace bool
	// NoHeaders and ShowLabels are kubectl's --no-headers and --show-labels.
	NoHeaders, ShowLabels bool
	// WithKind prefixes the table's names with their kind (pod/web-a), as
	// kubectl does when it lists several kinds.
	WithKind bool
	// Single prints one object as itself (kubectl get KIND NAME); otherwise
	// JSON and YAML print a v1 List, even of one object or none.
	Single bool
	// Now is the time AGE columns count from.
	Now time.Time
}

// CheckOutput returns an error for an -o value Print does not take, or a
// template (jsonpath, custom-columns) that does not parse.
func CheckOutput(output string) error {
	switch output {
	case OutputTable, OutputWide, OutputJSON, OutputYAML, OutputName:
		return nil
	}
	if _, _, ok := templateFormat(output); ok {
		_, err := templatePrinter(output, false)
		return err
	}
	return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: custom-columns,json,jsonpath,jsonpath-as-json,name,wide,yaml", output)
}

// IsHuman reports whether output is a table (the default or wide), which
// a command prints per kind; the others print one object or one List.
func IsHuman(output string) bool {
	return output == OutputTable || output == OutputWide
}

// Print writes objs, all of one kind and each with its TypeMeta set, as
// kubectl get does with opts.
func Print(w io.Writer, objs []runtime.Object, opts Options) error {
	if err := CheckOutput(opts.Output); err != nil {
		return err
	}
	switch opts.Output {
	case OutputTable, OutputWide:
		if len(objs) == 0 {
			return nil
		}
		table, err := Table(objs, opts.Now)
		if err != nil {
			return err
		}
		p := printers.NewTablePrinter(printers.PrintOptions{
			Wide: opts.Output == OutputWide, WithNamespace: opts.WithNamespace,
			NoHeaders: opts.NoHeaders, ShowLabels: opts.ShowLabels,
			WithKind: opts.WithKind, Kind: objs[0].GetObjectKind().GroupVersionKind().GroupKind(),
		})
		return p.PrintObj(table, w)
	}
	obj, err := toPrint(objs, opts.Single)
	if err != nil {
		return err
	}
	return printObject(obj, w, opts)
}

// printObject prints obj (one object or a List, as toPrint makes them)
// with the printer of opts.Output other than a table.
func printObject(obj runtime.Object, w io.Writer, opts Options) error {
	var p printers.ResourcePrinter
	switch opts.Output {
	case OutputJSON:
		p = &printers.JSONPrinter{}
	case OutputYAML:
		p = &printers.YAMLPrinter{}
	case OutputName:
		p = &printers.NamePrinter{}
	default:
		var err error
		if p, err = templatePrinter(opts.Output, opts.NoHeaders); err != nil {
			return err
		}
	}
	return p.PrintObj(obj, w)
}

// Table is the metav1.Table the API server would send for objs (all of
// one kind): every column, the wide ones too, as the server makes them;
// the table printer leaves out the wide ones without -o wide.
func Table(objs []runtime.Object, now time.Time) (*metav1.Table, error) {
	if len(objs) == 0 {
		return &metav1.Table{}, nil
	}
	kp, err := printerFor(objs[0])
	if err != nil {
		return nil, err
	}
	t := &metav1.Table{ColumnDefinitions: kp.columns}
	for _, o := range objs {
		if _, err := printerFor(o); err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: kp.row(o, true, now), Object: runtime.RawExtension{Object: o}})
	}
	return t, nil
}

// toPrint is what kubectl hands its JSON, YAML and name printers: the
// object as unstructured (so keys print sorted, as kubectl's do), or a v1
// List of them.
func toPrint(objs []runtime.Object, single bool) (runtime.Object, error) {
	var items []unstructured.Unstructured
	for _, o := range objs {
		if o.GetObjectKind().GroupVersionKind().Empty() {
			return nil, fmt.Errorf("kubeprint: %T without apiVersion and kind", o)
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		items = append(items, unstructured.Unstructured{Object: m})
	}
	if single && len(items) == 1 {
		return &items[0], nil
	}
	return &unstructured.UnstructuredList{
		Object: map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}},
		Items:  items,
	}, nil
}
