// Package apisurface checks a package's upstream-visible surface, name by
// name, for the packages' API-surface tests: a func's or method's signature
// (methods without their receiver), a struct field's type and tag, a
// constant's value, an error's text. WK_API_DUMP=1 prints what is instead.
package apisurface

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// Describe describes one upstream-visible name: a func's or method's
// signature (methods without their receiver), a struct field's type and
// tag, a constant's value, an error's text.
func Describe(kind string, v any, member string) string {
	switch kind {
	case "func":
		return reflect.TypeOf(v).String()
	case "method":
		t, iface := v.(reflect.Type)
		if !iface {
			t = reflect.TypeOf(v)
		}
		m, ok := t.MethodByName(member)
		if !ok {
			return "missing"
		}
		ft := m.Type
		first := 1
		if iface {
			first = 0 // an interface's methods have no receiver
		}
		var ins, outs []string
		for i := first; i < ft.NumIn(); i++ {
			ins = append(ins, ft.In(i).String())
		}
		for i := 0; i < ft.NumOut(); i++ {
			outs = append(outs, ft.Out(i).String())
		}
		s := "func(" + strings.Join(ins, ", ") + ")"
		switch len(outs) {
		case 0:
		case 1:
			s += " " + outs[0]
		default:
			s += " (" + strings.Join(outs, ", ") + ")"
		}
		return s
	case "field":
		t := reflect.TypeOf(v)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		f, ok := t.FieldByName(member)
		if !ok || !f.IsExported() {
			return "missing"
		}
		if f.Tag != "" {
			return f.Type.String() + " `" + string(f.Tag) + "`"
		}
		return f.Type.String()
	case "fields":
		t := reflect.TypeOf(v)
		var names []string
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() {
				names = append(names, t.Field(i).Name)
			}
		}
		return strings.Join(names, ",")
	case "error":
		return v.(error).Error()
	case "value":
		return fmt.Sprint(v)
	case "type":
		return reflect.TypeOf(v).Elem().Kind().String() + " " + reflect.TypeOf(v).Elem().String()
	}
	return "unknown kind " + kind
}

// Case is one name of the surface and what it must describe as.
type Case struct {
	Kind, Name string
	V          any
	Member     string
	Want       string
}

// Check fails t for every case that does not describe as it must. A test
// keeps its table in a struct type of its own with Case's fields (so its
// literals can stay unkeyed) and passes it here.
func Check[C ~struct {
	Kind, Name string
	V          any
	Member     string
	Want       string
}](t *testing.T, cases []C) {
	t.Helper()
	dump := os.Getenv("WK_API_DUMP") != ""
	for _, raw := range cases {
		c := Case(raw)
		got := Describe(c.Kind, c.V, c.Member)
		if dump {
			fmt.Printf("%s %s = %q\n", c.Kind, c.Name, got)
			continue
		}
		if got != c.Want {
			t.Errorf("%s %s: %q, want %q", c.Kind, c.Name, got, c.Want)
		}
	}
}
