package records

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// A column describes one column of a record file: its Arrow field and how a row
// struct R moves into it (writers) and out of it (readers). Each file is one list of
// columns (tables.go); the generic Writer and Reader do the rest.
type column[R any] struct {
	name     string
	typ      arrow.DataType
	nullable bool
	codec    func(e *env) codec[R]
}

func (c column[R]) field() arrow.Field {
	return arrow.Field{Name: c.name, Type: c.typ, Nullable: c.nullable}
}

// env is what the codecs of one writer or reader share.
type env struct {
	mem   memory.Allocator
	nodes []string // the node dictionary: a writer's Dictionaries.Nodes, a reader's file's
	// nodeDict is the writer's node dictionary as an Arrow array, shared by every node
	// column and every batch so that the IPC file writer sees one dictionary per field.
	nodeDict arrow.Array
	// nodeIndex maps names to node indices (readers, to parse paths).
	nodeIndex map[string]int32
}

// codec moves one column between rows and Arrow arrays. Writers call put, reserve and
// build; readers call load once per batch and get once per row.
type codec[R any] interface {
	put(r *R)
	reserve(n int)
	build() arrow.Array
	load(a arrow.Array) error
	get(i int, r *R) error
	release()
}

// checker is implemented by codecs whose values can be out of range; the writer checks
// a whole row before it appends any column, so a rejected row leaves no trace.
type checker[R any] interface {
	check(r *R) error
}

// dictType is the type of every dictionary column: dictionary<values=utf8, indices=int32>.
var dictType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// ---- plain values: int64, int32, uint16, uint8, bool ----

type appender[T any] interface {
	array.Builder
	Append(T)
}

type valuer[T any] interface {
	arrow.Array
	Value(int) T
}

type valueCodec[R, T any] struct {
	f      func(*R) *T   // the row's field; nil for a derived, write-only column
	derive func(*R) T    // the value of a derived column
	null   func(*R) bool // nil: never null; else the row's value is written as null
	b      appender[T]
	a      valuer[T]
}

// value is a non-null column of a primitive type whose Go type is T.
func value[R, T any](name string, typ arrow.DataType, f func(*R) *T) column[R] {
	return nullable(name, typ, f, nil)
}

// nullable is a column of a primitive type that is null where null(row) holds; a
// reader leaves the row's field zero there.
func nullable[R, T any](name string, typ arrow.DataType, f func(*R) *T, null func(*R) bool) column[R] {
	return column[R]{name: name, typ: typ, nullable: null != nil, codec: func(e *env) codec[R] {
		return &valueCodec[R, T]{f: f, null: null, b: array.NewBuilder(e.mem, typ).(appender[T])}
	}}
}

// derivedI64 is a write-only int64 column computed from the row (a reader skips it).
func derivedI64[R any](name string, derive func(*R) int64) column[R] {
	return column[R]{name: name, typ: arrow.PrimitiveTypes.Int64, codec: func(e *env) codec[R] {
		return &valueCodec[R, int64]{derive: derive, b: array.NewInt64Builder(e.mem)}
	}}
}

func i64[R any](name string, f func(*R) *int64) column[R] {
	return value(name, arrow.PrimitiveTypes.Int64, f)
}

func i32[R any](name string, f func(*R) *int32) column[R] {
	return value(name, arrow.PrimitiveTypes.Int32, f)
}

func u8[R any](name string, f func(*R) *uint8) column[R] {
	return value(name, arrow.PrimitiveTypes.Uint8, f)
}

func u16[R any](name string, f func(*R) *uint16) column[R] {
	return value(name, arrow.PrimitiveTypes.Uint16, f)
}

func (c *valueCodec[R, T]) put(r *R) {
	if c.null != nil && c.null(r) {
		c.b.AppendNull()
		return
	}
	if c.f == nil {
		c.b.Append(c.derive(r))
		return
	}
	c.b.Append(*c.f(r))
}

func (c *valueCodec[R, T]) reserve(n int)      { c.b.Reserve(n) }
func (c *valueCodec[R, T]) build() arrow.Array { return c.b.NewArray() }
func (c *valueCodec[R, T]) release()           { c.b.Release() }

func (c *valueCodec[R, T]) load(a arrow.Array) error {
	c.a = a.(valuer[T]) // the reader has checked the schema: the assertion holds
	return nil
}

func (c *valueCodec[R, T]) get(i int, r *R) error {
	if c.f == nil {
		return nil
	}
	if c.a.IsNull(i) {
		var zero T
		*c.f(r) = zero
		return nil
	}
	*c.f(r) = c.a.Value(i)
	return nil
}

// ---- dictionary columns: nodes and the fixed enumerations ----

type dictCodec[R any, E ~uint8 | ~int32] struct {
	what   string
	f      func(*R) *E // the row's field; nil for a derived, write-only column
	derive func(*R) E  // the value of a derived column
	names  []string    // the dictionary, as the writer writes it or the reader expects it
	nodes  bool        // the node dictionary: names come from env (a reader adopts the file's)
	e      *env        //
	dict   arrow.Array // writer: the dictionary, the same array for every batch
	b      *array.Int32Builder
	idx    *array.Int32 // reader: the batch's indices
}

// nodeColumn is a node name column: rows hold indices into the node dictionary.
func nodeColumn[R any](name string, f func(*R) *int32) column[R] {
	return dictColumn(name, "node", f, nil, nil)
}

// enumColumn is a column of one of the package's enumerations.
func enumColumn[R any, E ~uint8](name, what string, names []string, f func(*R) *E) column[R] {
	return dictColumn(name, what, f, nil, names)
}

// derivedNodeColumn is a write-only node column computed from the row.
func derivedNodeColumn[R any](name string, derive func(*R) int32) column[R] {
	return dictColumn(name, "node", nil, derive, nil)
}

func dictColumn[R any, E ~uint8 | ~int32](name, what string, f func(*R) *E, derive func(*R) E, names []string) column[R] {
	return column[R]{name: name, typ: dictType, codec: func(e *env) codec[R] {
		c := &dictCodec[R, E]{what: what, f: f, derive: derive, names: names, nodes: names == nil, e: e,
			b: array.NewInt32Builder(e.mem)}
		if c.nodes {
			c.names, c.dict = e.nodes, e.nodeDict
			if c.dict != nil {
				c.dict.Retain()
			}
		} else {
			c.dict = stringArray(e.mem, names)
		}
		return c
	}}
}

func (c *dictCodec[R, E]) value(r *R) E {
	if c.f == nil {
		return c.derive(r)
	}
	return *c.f(r)
}

func (c *dictCodec[R, E]) check(r *R) error {
	if v := int64(c.value(r)); v < 0 || v >= int64(len(c.names)) {
		return fmt.Errorf("%s %d out of range [0,%d)", c.what, v, len(c.names))
	}
	return nil
}

func (c *dictCodec[R, E]) put(r *R)      { c.b.Append(int32(c.value(r))) }
func (c *dictCodec[R, E]) reserve(n int) { c.b.Reserve(n) }

func (c *dictCodec[R, E]) build() arrow.Array {
	ind := c.b.NewArray()
	defer ind.Release()
	return array.NewDictionaryArray(dictType, ind, c.dict)
}

func (c *dictCodec[R, E]) release() {
	c.b.Release()
	if c.dict != nil {
		c.dict.Release()
	}
}

func (c *dictCodec[R, E]) load(a arrow.Array) error {
	d := a.(*array.Dictionary)
	values, ok := d.Dictionary().(*array.String)
	if !ok {
		return fmt.Errorf("dictionary of %s is %s, want utf8", c.what, d.Dictionary().DataType())
	}
	if c.nodes && c.e.nodes == nil {
		c.e.adoptNodes(values)
	}
	if c.nodes {
		c.names = c.e.nodes
	}
	if !sameStrings(values, c.names) {
		return fmt.Errorf("dictionary of %s differs from the expected %q", c.what, c.names)
	}
	c.idx = d.Indices().(*array.Int32)
	return nil
}

func (c *dictCodec[R, E]) get(i int, r *R) error {
	v := c.idx.Value(i)
	if v < 0 || int(v) >= len(c.names) || c.idx.IsNull(i) {
		return fmt.Errorf("%s index %d out of range [0,%d) or null", c.what, v, len(c.names))
	}
	if c.f != nil {
		*c.f(r) = E(v)
	}
	return nil
}

// adoptNodes makes a copy of a file's node dictionary the reader's node names.
func (e *env) adoptNodes(values *array.String) {
	e.nodes = make([]string, values.Len())
	e.nodeIndex = make(map[string]int32, values.Len())
	for i := range e.nodes {
		e.nodes[i] = strings.Clone(values.Value(i))
		e.nodeIndex[e.nodes[i]] = int32(i)
	}
}

func sameStrings(a *array.String, want []string) bool {
	if a.Len() != len(want) || a.NullN() != 0 {
		return false
	}
	for i, w := range want {
		if a.Value(i) != w {
			return false
		}
	}
	return true
}

func stringArray(mem memory.Allocator, values []string) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.AppendValues(values, nil)
	return b.NewArray()
}

// ---- IPv4 addresses as dotted quads ----

type ipv4Codec[R any] struct {
	f   func(*R) *[4]byte
	b   *array.StringBuilder
	a   *array.String
	buf []byte
}

func ipv4Column[R any](name string, f func(*R) *[4]byte) column[R] {
	return column[R]{name: name, typ: arrow.BinaryTypes.String, codec: func(e *env) codec[R] {
		return &ipv4Codec[R]{f: f, b: array.NewStringBuilder(e.mem), buf: make([]byte, 0, 16)}
	}}
}

func (c *ipv4Codec[R]) put(r *R) {
	a := c.f(r)
	c.buf = c.buf[:0]
	for i, x := range a {
		if i > 0 {
			c.buf = append(c.buf, '.')
		}
		c.buf = strconv.AppendUint(c.buf, uint64(x), 10)
	}
	c.b.BinaryBuilder.Append(c.buf)
}

func (c *ipv4Codec[R]) reserve(n int) {
	c.b.Reserve(n)
	c.b.ReserveData(n * 12)
}

func (c *ipv4Codec[R]) build() arrow.Array { return c.b.NewArray() }
func (c *ipv4Codec[R]) release()           { c.b.Release() }

func (c *ipv4Codec[R]) load(a arrow.Array) error {
	c.a = a.(*array.String)
	return nil
}

func (c *ipv4Codec[R]) get(i int, r *R) error {
	s := c.a.Value(i)
	addr, err := netip.ParseAddr(s)
	if err != nil || !addr.Is4() || c.a.IsNull(i) {
		return fmt.Errorf("address %q is not an IPv4 dotted quad", s)
	}
	*c.f(r) = addr.As4()
	return nil
}

// ---- paths: node names joined by " > " ----

// PathSeparator joins the node names of a packet's path in packets.arrow.
const PathSeparator = " > "

type pathCodec[R any] struct {
	f   func(*R) *[]int32
	e   *env
	b   *array.StringBuilder
	a   *array.String
	buf []byte
}

func pathColumn[R any](name string, f func(*R) *[]int32) column[R] {
	return column[R]{name: name, typ: arrow.BinaryTypes.String, codec: func(e *env) codec[R] {
		return &pathCodec[R]{f: f, e: e, b: array.NewStringBuilder(e.mem)}
	}}
}

func (c *pathCodec[R]) check(r *R) error {
	p := *c.f(r)
	if len(p) == 0 {
		return fmt.Errorf("empty path (it holds at least the source host)")
	}
	for _, n := range p {
		if n < 0 || int(n) >= len(c.e.nodes) {
			return fmt.Errorf("path node %d out of range [0,%d)", n, len(c.e.nodes))
		}
	}
	return nil
}

func (c *pathCodec[R]) put(r *R) {
	c.buf = c.buf[:0]
	for i, n := range *c.f(r) {
		if i > 0 {
			c.buf = append(c.buf, PathSeparator...)
		}
		c.buf = append(c.buf, c.e.nodes[n]...)
	}
	c.b.BinaryBuilder.Append(c.buf)
}

func (c *pathCodec[R]) reserve(n int) {
	c.b.Reserve(n)
	c.b.ReserveData(n * 64)
}

func (c *pathCodec[R]) build() arrow.Array { return c.b.NewArray() }
func (c *pathCodec[R]) release()           { c.b.Release() }

func (c *pathCodec[R]) load(a arrow.Array) error {
	c.a = a.(*array.String)
	return nil
}

func (c *pathCodec[R]) get(i int, r *R) error {
	p := (*c.f(r))[:0]
	defer func() { *c.f(r) = p }()
	for s, more := c.a.Value(i), true; more; {
		var name string
		name, s, more = strings.Cut(s, PathSeparator)
		n, ok := c.e.nodeIndex[name]
		if !ok {
			return fmt.Errorf("path %q names an unknown node %q", c.a.Value(i), name)
		}
		p = append(p, n)
	}
	return nil
}
