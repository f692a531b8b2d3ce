package nlbatch

import "strings"

// LearnSets records in sets the types of the named sets and maps that the
// committed transaction text of table of family added, and forgets those
// it deleted (or all, if it deleted the table). A set with flags (dynamic,
// timeout, interval) is not recorded: Compile leaves its elements to nft.
func LearnSets(family, table, text string, sets map[string]SetType) {
	for more := true; more; {
		var line string
		line, text, more = strings.Cut(text, "\n")
		verb, rest, _ := strings.Cut(line, " ")
		object, rest, _ := strings.Cut(rest, " ")
		lineFamily, rest, _ := strings.Cut(rest, " ")
		lineTable, rest, _ := strings.Cut(rest, " ")
		if lineFamily != family || lineTable != table {
			continue
		}
		name, body, _ := strings.Cut(rest, " ")
		switch {
		case verb == "delete" && object == "table":
			clear(sets)
		case verb == "delete" && (object == "set" || object == "map"), verb == "destroy" && (object == "set" || object == "map"):
			delete(sets, name)
		case verb == "add" && (object == "set" || object == "map"):
			if t, ok := typeOfDefinition(body); ok && (object == "map") == t.verdict {
				sets[name] = t
			} else {
				delete(sets, name)
			}
		}
	}
}

// typeOfDefinition reads "{ type T ; comment "…" ; }": the type, with no
// flags, timeout or other property that changes how elements are written.
func typeOfDefinition(body string) (SetType, bool) {
	body, ok := strings.CutPrefix(body, "{ type ")
	if !ok {
		return SetType{}, false
	}
	typeText, rest, _ := strings.Cut(body, " ; ")
	if rest != "}" && !strings.HasPrefix(rest, "comment ") {
		return SetType{}, false
	}
	return parseSetType(typeText)
}
