package telemetry

import (
	"encoding/binary"
	"math"
)

// pb appends protocol buffer fields (the wire format of
// https://protobuf.dev/programming-guides/encoding/): enough of it for
// the OTLP messages this package sends. Zero values are left out, as
// proto3 does.
type pb struct{ b []byte }

// Wire types.
const (
	wireVarint = 0
	wireI64    = 1
	wireLen    = 2
	wireI32    = 5
)

func (p *pb) tag(field, wire int) { p.varint(uint64(field)<<3 | uint64(wire)) }

func (p *pb) varint(v uint64) { p.b = binary.AppendUvarint(p.b, v) }

func (p *pb) uint(field int, v uint64) {
	if v != 0 {
		p.tag(field, wireVarint)
		p.varint(v)
	}
}

func (p *pb) int64(field int, v int64) { p.uint(field, uint64(v)) }

func (p *pb) bool(field int, v bool) {
	if v {
		p.uint(field, 1)
	}
}

func (p *pb) fixed64(field int, v uint64) {
	if v != 0 {
		p.tag(field, wireI64)
		p.b = binary.LittleEndian.AppendUint64(p.b, v)
	}
}

// fixed64Always writes v even when 0: a oneof member (a data point's
// value, an attribute's) is present whatever its value.
func (p *pb) fixed64Always(field int, v uint64) {
	p.tag(field, wireI64)
	p.b = binary.LittleEndian.AppendUint64(p.b, v)
}

func (p *pb) fixed32(field int, v uint32) {
	if v != 0 {
		p.tag(field, wireI32)
		p.b = binary.LittleEndian.AppendUint32(p.b, v)
	}
}

func (p *pb) double(field int, v float64) { p.fixed64Always(field, math.Float64bits(v)) }

func (p *pb) bytes(field int, v []byte) {
	if len(v) > 0 {
		p.tag(field, wireLen)
		p.varint(uint64(len(v)))
		p.b = append(p.b, v...)
	}
}

func (p *pb) string(field int, v string) {
	if v != "" {
		p.tag(field, wireLen)
		p.varint(uint64(len(v)))
		p.b = append(p.b, v...)
	}
}

// msg writes an embedded message built by fill; an empty one is still
// written when always is set (a oneof member, a present sub-message).
func (p *pb) msg(field int, always bool, fill func(*pb)) {
	var sub pb
	fill(&sub)
	if len(sub.b) == 0 && !always {
		return
	}
	p.tag(field, wireLen)
	p.varint(uint64(len(sub.b)))
	p.b = append(p.b, sub.b...)
}

// packedFixed64 writes a packed repeated fixed64 (or double) field.
func (p *pb) packedFixed64(field int, vs []uint64) {
	if len(vs) == 0 {
		return
	}
	p.tag(field, wireLen)
	p.varint(uint64(8 * len(vs)))
	for _, v := range vs {
		p.b = binary.LittleEndian.AppendUint64(p.b, v)
	}
}
