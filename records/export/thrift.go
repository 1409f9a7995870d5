package export

import "encoding/binary"

// compact is an encoder of the Thrift compact protocol, the encoding of a Parquet
// file's footer (FileMetaData) and page headers: each field is a header byte of the
// field id's delta from the previous field of its struct and the value's type, then
// the value (integers as zigzag varints, binary as a varint length and the bytes,
// lists as a size-and-type header and the elements), each struct ending in a stop
// byte. Only what Parquet's structures need is here.
type compact struct {
	buf  []byte
	last []int16 // the last field id of each open struct, innermost last
}

// The compact protocol's type codes.
const (
	ctTrue   = 1
	ctFalse  = 2
	ctByte   = 3
	ctI32    = 5
	ctI64    = 6
	ctBinary = 8
	ctList   = 9
	ctStruct = 12
)

func (c *compact) reset() {
	c.buf = c.buf[:0]
	c.last = append(c.last[:0], 0)
}

func (c *compact) varint(v uint64) { c.buf = binary.AppendUvarint(c.buf, v) }

func (c *compact) zigzag(v int64) { c.varint(uint64(v<<1) ^ uint64(v>>63)) }

func (c *compact) field(id int16, typ byte) {
	top := len(c.last) - 1
	if d := id - c.last[top]; d > 0 && d <= 15 {
		c.buf = append(c.buf, byte(d)<<4|typ)
	} else {
		c.buf = append(c.buf, typ)
		c.zigzag(int64(id))
	}
	c.last[top] = id
}

func (c *compact) i32(id int16, v int32) { c.field(id, ctI32); c.zigzag(int64(v)) }

func (c *compact) i64(id int16, v int64) { c.field(id, ctI64); c.zigzag(v) }

func (c *compact) i8(id int16, v int8) { c.field(id, ctByte); c.buf = append(c.buf, byte(v)) }

func (c *compact) bool(id int16, v bool) {
	if v {
		c.field(id, ctTrue)
	} else {
		c.field(id, ctFalse)
	}
}

func (c *compact) binary(id int16, b []byte) { c.field(id, ctBinary); c.bytes(b) }

func (c *compact) string(id int16, s string) {
	c.field(id, ctBinary)
	c.varint(uint64(len(s)))
	c.buf = append(c.buf, s...)
}

// bytes is a binary value without a field header (a list element).
func (c *compact) bytes(b []byte) {
	c.varint(uint64(len(b)))
	c.buf = append(c.buf, b...)
}

// list starts a list field of n elements of type elem; the elements follow (structs
// through elem, the others through the header-less writers).
func (c *compact) list(id int16, elem byte, n int) {
	c.field(id, ctList)
	if n < 15 {
		c.buf = append(c.buf, byte(n)<<4|elem)
	} else {
		c.buf = append(c.buf, 0xf0|elem)
		c.varint(uint64(n))
	}
}

// begin starts a struct field; end closes it.
func (c *compact) begin(id int16) {
	c.field(id, ctStruct)
	c.last = append(c.last, 0)
}

// elem starts a struct that is a list element; end closes it.
func (c *compact) elem() { c.last = append(c.last, 0) }

func (c *compact) end() {
	c.buf = append(c.buf, 0)
	c.last = c.last[:len(c.last)-1]
}
