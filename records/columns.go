package records

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
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
	nodes []string // the node dictionary: a writer's Dictionaries.Nodes, a reader's file's
	// nodeDict is the writer's node dictionary as an Arrow array, shared by every node
	// column and every batch so that the IPC file writer sees one dictionary per field.
	nodeDict arrow.Array
	// nodeIndex maps names to node indices (readers, to parse paths).
	nodeIndex map[string]int32
}

// codec moves one column between rows and Arrow arrays.
//
// Writers call put per row, then build once per batch: the array build returns wraps
// the codec's own Go slices without copying (memory.NewBufferBytes) and is valid
// until reset, which the writer calls once the IPC writer has written the batch. The
// slices keep their capacity, so a writer allocates nothing per row or per batch in
// steady state. Readers call load once per batch and get once per row.
type codec[R any] interface {
	put(r *R) error // append the row's value, or return why it cannot be written
	undo()          // remove the value the last put appended
	build() arrow.Array
	reset()
	load(a arrow.Array) error
	get(i int, r *R) error
	release()
}

// dictType is the type of every dictionary column: dictionary<values=utf8, indices=int32>.
var dictType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// newArray wraps buffers (nil for absent ones) as an array of n values.
func newArray(typ arrow.DataType, n, nulls int, bufs ...[]byte) arrow.Array {
	mb := make([]*memory.Buffer, len(bufs))
	for i, b := range bufs {
		if b != nil {
			mb[i] = memory.NewBufferBytes(b)
		}
	}
	data := array.NewData(typ, n, mb, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// bitmap is a growable Arrow bitmap (validity or booleans), least significant bit first.
type bitmap struct {
	bits []byte
	n    int // bits used
}

func (b *bitmap) append(v bool) {
	if b.n%8 == 0 {
		b.bits = append(b.bits, 0)
	}
	if v {
		b.bits[b.n/8] |= 1 << (b.n % 8)
	}
	b.n++
}

func (b *bitmap) reset() { b.bits, b.n = b.bits[:0], 0 }

// pop removes the last bit and returns it.
func (b *bitmap) pop() bool {
	b.n--
	last := &b.bits[b.n/8]
	v := *last&(1<<(b.n%8)) != 0
	*last &^= 1 << (b.n % 8)
	if b.n%8 == 0 {
		b.bits = b.bits[:b.n/8]
	}
	return v
}

// ---- fixed-width values: int64, int32, uint16, uint8 ----

// appendDoubling is append for a column's values, growing the slice by doubling
// (from 512 values) where append grows large slices by a quarter: a column of n
// rows allocates under 2n values in all, not about 5n (a record file of 65,536-row
// batches reaches the batch's size in seven allocations and keeps it).
func appendDoubling[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		ns := make([]T, len(s), max(512, 2*cap(s)))
		copy(ns, s)
		s = ns
	}
	return append(s, v)
}

type valuer[T any] interface {
	arrow.Array
	Value(int) T
}

type valueCodec[R any, T arrow.FixedWidthType] struct {
	typ    arrow.DataType
	f      func(*R) *T   // the row's field; nil for a derived, write-only column
	derive func(*R) T    // the value of a derived column
	null   func(*R) bool // nil: never null; else the row's value is written as null
	vals   []T
	valid  bitmap // nullable columns only
	nulls  int
	a      valuer[T]
}

// value is a non-null column of a primitive type whose Go type is T.
func value[R any, T arrow.FixedWidthType](name string, typ arrow.DataType, f func(*R) *T) column[R] {
	return nullable(name, typ, f, nil)
}

// nullable is a column of a primitive type that is null where null(row) holds; a
// reader leaves the row's field zero there.
func nullable[R any, T arrow.FixedWidthType](name string, typ arrow.DataType, f func(*R) *T, null func(*R) bool) column[R] {
	return column[R]{name: name, typ: typ, nullable: null != nil, codec: func(*env) codec[R] {
		return &valueCodec[R, T]{typ: typ, f: f, null: null}
	}}
}

// derivedI64 is a write-only int64 column computed from the row (a reader skips it).
func derivedI64[R any](name string, derive func(*R) int64) column[R] {
	return column[R]{name: name, typ: arrow.PrimitiveTypes.Int64, codec: func(*env) codec[R] {
		return &valueCodec[R, int64]{typ: arrow.PrimitiveTypes.Int64, derive: derive}
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

func (c *valueCodec[R, T]) put(r *R) error {
	var v T
	switch {
	case c.null != nil && c.null(r):
		c.valid.append(false)
		c.nulls++
		c.vals = appendDoubling(c.vals, v)
		return nil
	case c.f == nil:
		v = c.derive(r)
	default:
		v = *c.f(r)
	}
	if c.null != nil {
		c.valid.append(true)
	}
	c.vals = appendDoubling(c.vals, v)
	return nil
}

func (c *valueCodec[R, T]) undo() {
	c.vals = c.vals[:len(c.vals)-1]
	if c.null != nil && !c.valid.pop() {
		c.nulls--
	}
}

func (c *valueCodec[R, T]) build() arrow.Array {
	var valid []byte
	if c.nulls > 0 {
		valid = c.valid.bits
	}
	return newArray(c.typ, len(c.vals), c.nulls, valid, arrow.GetBytes(c.vals))
}

func (c *valueCodec[R, T]) reset() {
	c.vals, c.nulls = c.vals[:0], 0
	c.valid.reset()
}

func (c *valueCodec[R, T]) release() {}

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

// ---- booleans ----

type boolCodec[R any] struct {
	f    func(*R) *bool
	vals bitmap
	a    *array.Boolean
}

func boolColumn[R any](name string, f func(*R) *bool) column[R] {
	return column[R]{name: name, typ: arrow.FixedWidthTypes.Boolean, codec: func(*env) codec[R] {
		return &boolCodec[R]{f: f}
	}}
}

func (c *boolCodec[R]) put(r *R) error {
	c.vals.append(*c.f(r))
	return nil
}

func (c *boolCodec[R]) undo() { c.vals.pop() }
func (c *boolCodec[R]) build() arrow.Array {
	return newArray(arrow.FixedWidthTypes.Boolean, c.vals.n, 0, nil, c.vals.bits)
}
func (c *boolCodec[R]) reset()   { c.vals.reset() }
func (c *boolCodec[R]) release() {}

func (c *boolCodec[R]) load(a arrow.Array) error {
	c.a = a.(*array.Boolean)
	return nil
}

func (c *boolCodec[R]) get(i int, r *R) error {
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
	e      *env
	dict   arrow.Array  // writer: the dictionary, the same array for every batch
	idx    []int32      // writer: the batch's indices
	ind    *array.Int32 // reader: the batch's indices
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
		c := &dictCodec[R, E]{what: what, f: f, derive: derive, names: names, nodes: names == nil, e: e}
		switch {
		case c.nodes && e.nodeDict != nil: // a writer's node column
			c.names, c.dict = e.nodes, e.nodeDict
			c.dict.Retain()
		case !c.nodes:
			c.dict = stringArray(names)
		}
		return c
	}}
}

func (c *dictCodec[R, E]) put(r *R) error {
	var v E
	if c.f == nil {
		v = c.derive(r)
	} else {
		v = *c.f(r)
	}
	if int64(v) < 0 || int64(v) >= int64(len(c.names)) {
		return fmt.Errorf("%s %d out of range [0,%d)", c.what, v, len(c.names))
	}
	c.idx = appendDoubling(c.idx, int32(v))
	return nil
}

func (c *dictCodec[R, E]) undo() { c.idx = c.idx[:len(c.idx)-1] }

func (c *dictCodec[R, E]) build() arrow.Array {
	ind := newArray(arrow.PrimitiveTypes.Int32, len(c.idx), 0, nil, arrow.GetBytes(c.idx))
	defer ind.Release()
	return array.NewDictionaryArray(dictType, ind, c.dict)
}

func (c *dictCodec[R, E]) reset() { c.idx = c.idx[:0] }

func (c *dictCodec[R, E]) release() {
	if c.dict != nil {
		c.dict.Release()
		c.dict = nil
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
	c.ind = d.Indices().(*array.Int32)
	return nil
}

func (c *dictCodec[R, E]) get(i int, r *R) error {
	v := c.ind.Value(i)
	if v < 0 || int(v) >= len(c.names) || c.ind.IsNull(i) {
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

// stringArray is a utf8 array holding values (the dictionaries).
func stringArray(values []string) arrow.Array {
	var s stringsBuf
	for _, v := range values {
		s.data = append(s.data, v...)
		s.end()
	}
	return s.build()
}

// stringsBuf is a utf8 column: growable offsets and bytes for writing, the batch's
// array for reading. The string codecs embed it.
type stringsBuf struct {
	offsets []int32 // len = values + 1 once the first value is ended
	data    []byte
	a       *array.String
}

// end closes the value appended to data since the previous end.
func (s *stringsBuf) end() {
	if len(s.offsets) == 0 {
		s.offsets = append(s.offsets, 0)
	}
	s.offsets = append(s.offsets, int32(len(s.data)))
}

func (s *stringsBuf) build() arrow.Array {
	if len(s.offsets) == 0 {
		s.offsets = append(s.offsets, 0)
	}
	return newArray(arrow.BinaryTypes.String, len(s.offsets)-1, 0, nil, arrow.GetBytes(s.offsets), s.data)
}

func (s *stringsBuf) reset() { s.offsets, s.data = s.offsets[:0], s.data[:0] }

// undo removes the last ended value.
func (s *stringsBuf) undo() {
	s.offsets = s.offsets[:len(s.offsets)-1]
	s.data = s.data[:s.offsets[len(s.offsets)-1]]
}

// abandon drops bytes appended since the last ended value.
func (s *stringsBuf) abandon() {
	if len(s.offsets) > 0 {
		s.data = s.data[:s.offsets[len(s.offsets)-1]]
	} else {
		s.data = s.data[:0]
	}
}
func (s *stringsBuf) release() {}

func (s *stringsBuf) load(a arrow.Array) error {
	s.a = a.(*array.String)
	return nil
}

// ---- IP addresses as text: IPv4 dotted quads, IPv6 in RFC 5952 ----

type addrCodec[R any] struct {
	f func(*R) *ipaddr.Addr
	stringsBuf
}

func addrColumn[R any](name string, f func(*R) *ipaddr.Addr) column[R] {
	return column[R]{name: name, typ: arrow.BinaryTypes.String, codec: func(*env) codec[R] {
		return &addrCodec[R]{f: f}
	}}
}

// decimalOctets[x] is x in decimal: formatting an IPv4 address is four appends.
var decimalOctets = func() (t [256]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

func (c *addrCodec[R]) put(r *R) error {
	a := c.f(r)
	switch {
	case a.Is4():
		b := a.As4()
		c.data = append(c.data, decimalOctets[b[0]]...)
		for _, x := range b[1:] {
			c.data = append(c.data, '.')
			c.data = append(c.data, decimalOctets[x]...)
		}
	case a.Is6():
		c.data = a.AppendTo(c.data)
	} // the zero Addr (no address) is the empty string
	c.end()
	return nil
}

func (c *addrCodec[R]) get(i int, r *R) error {
	s := c.a.Value(i)
	if s == "" && !c.a.IsNull(i) {
		*c.f(r) = ipaddr.Addr{}
		return nil
	}
	addr, err := ipaddr.ParseAddr(s)
	if err != nil || c.a.IsNull(i) {
		return fmt.Errorf("address %q is neither an IPv4 dotted quad nor an IPv6 address", s)
	}
	*c.f(r) = addr
	return nil
}

// ---- the address family of a row's source address: ipv4, ipv6 ----

var familyNames = []string{"ipv4", "ipv6"}

// familyColumn is a write-only dictionary column of the family of the row's address
// (readers take the family from the address; a row without one says ipv4).
func familyColumn[R any](name string, f func(*R) *ipaddr.Addr) column[R] {
	return dictColumn(name, "address family", nil, func(r *R) uint8 {
		if f(r).Is6() {
			return 1
		}
		return 0
	}, familyNames)
}

// ---- paths: node names joined by " > " ----

// PathSeparator joins the node names of a packet's path in packets.arrow.
const PathSeparator = " > "

type pathCodec[R any] struct {
	f func(*R) *[]int32
	e *env
	stringsBuf
}

func pathColumn[R any](name string, f func(*R) *[]int32) column[R] {
	return column[R]{name: name, typ: arrow.BinaryTypes.String, codec: func(e *env) codec[R] {
		return &pathCodec[R]{f: f, e: e}
	}}
}

func (c *pathCodec[R]) put(r *R) error {
	p := *c.f(r)
	if len(p) == 0 {
		return fmt.Errorf("empty path (it holds at least the source host)")
	}
	for i, n := range p {
		if n < 0 || int(n) >= len(c.e.nodes) {
			c.abandon()
			return fmt.Errorf("path node %d out of range [0,%d)", n, len(c.e.nodes))
		}
		if i > 0 {
			c.data = append(c.data, PathSeparator...)
		}
		c.data = append(c.data, c.e.nodes[n]...)
	}
	c.end()
	return nil
}

func (c *pathCodec[R]) get(i int, r *R) error {
	p := (*c.f(r))[:0]
	var err error
	for s, more := c.a.Value(i), true; more && err == nil; {
		var name string
		name, s, more = strings.Cut(s, PathSeparator)
		n, ok := c.e.nodeIndex[name]
		if !ok {
			err = fmt.Errorf("path %q names an unknown node %q", c.a.Value(i), name)
		}
		p = append(p, n)
	}
	*c.f(r) = p
	return err
}
