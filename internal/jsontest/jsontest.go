// Package jsontest checks that values meant to travel as JSON (a step
// shipped to another host, a front end's job) come back unchanged.
package jsontest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// RoundTrips fills every exported field of a T, recursively, with a value
// that is not its zero, and fails t unless the T comes back from JSON
// equal: a field that JSON drops or changes shows.
func RoundTrips[T any](t *testing.T) {
	t.Helper()
	var v T
	n := 0
	fill(t, reflect.ValueOf(&v).Elem(), &n)
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back T
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, v) {
		t.Errorf("JSON changed the %T:\n%+v\nbecame\n%+v\n(%s)", v, v, back, b)
	}
}

// fill sets v to a value that is not its zero: a pointer to a filled
// value, a slice or map of one filled element.
func fill(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	*n++
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i), n)
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(t, v.Index(0), n)
	case reflect.Map:
		key, elem := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(t, key, n)
		fill(t, elem, n)
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(key, elem)
	case reflect.String:
		v.SetString("s" + strings.Repeat("x", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n%100) + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n%100) + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) + 0.25)
	default:
		t.Fatalf("a %s field (%s): teach jsontest its kind", v.Kind(), v.Type())
	}
}
