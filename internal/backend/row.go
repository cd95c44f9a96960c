package backend

import (
	"fmt"

	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// Value is one column of a row read with QueryRow, as the text protocol
// gives it.
type Value struct {
	Text    string
	Null    bool
	Numeric bool // the column's type is a number
}

// QueryRow runs a statement that returns at most one row and returns
// that row's values (nil for no row). It is for the proxy's own
// statements (reading back session state), never for a client's.
func (c *Conn) QueryRow(q string) ([]Value, error) {
	c.ResetSeq()
	if err := c.WritePacket(mysqlproto.AppendComQuery(nil, q, c.Caps)); err != nil {
		c.broken = true
		return nil, err
	}
	if err := c.Flush(); err != nil {
		c.broken = true
		return nil, err
	}
	pkt, err := c.ReadPacket()
	if err != nil {
		c.broken = true
		return nil, err
	}
	if mysqlproto.IsErr(pkt) {
		e, perr := mysqlproto.ParseErr(pkt)
		if perr != nil {
			c.broken = true
			return nil, perr
		}
		return nil, e
	}
	if mysqlproto.IsOK(pkt) {
		return nil, nil
	}
	typ, n, meta, err := mysqlproto.ClassifyResponse(pkt, c.Caps)
	if err != nil || typ != mysqlproto.ResultSet || !meta || n > 4096 {
		c.broken = true
		return nil, fmt.Errorf("unexpected answer to %q", q)
	}
	row := make([]Value, n)
	for i := range row {
		if pkt, err = c.ReadPacket(); err != nil {
			c.broken = true
			return nil, err
		}
		t, err := mysqlproto.ColumnType(pkt, c.Caps)
		if err != nil {
			c.broken = true
			return nil, err
		}
		row[i].Numeric = mysqlproto.NumericType(t)
	}
	deprecateEOF := c.Caps.Has(mysqlproto.ClientDeprecateEOF)
	if !deprecateEOF {
		if _, err = c.ReadPacket(); err != nil { // EOF after the metadata
			c.broken = true
			return nil, err
		}
	}
	rows := 0
	var rowErr error
	for {
		if pkt, err = c.ReadPacket(); err != nil {
			c.broken = true
			return nil, err
		}
		switch {
		case mysqlproto.IsErr(pkt):
			e, _ := mysqlproto.ParseErr(pkt)
			if e == nil {
				return nil, fmt.Errorf("error reading %q", q)
			}
			return nil, e
		case mysqlproto.IsEOF(pkt, deprecateEOF):
			if rows == 0 {
				return nil, rowErr
			}
			return row, rowErr
		}
		rows++
		if rows > 1 {
			rowErr = fmt.Errorf("%q returned more than one row", q)
			continue
		}
		off := 0
		for i := range row {
			s, null, w, err := mysqlproto.ReadLenEncString(pkt[off:])
			if err != nil {
				c.broken = true
				return nil, err
			}
			row[i].Text, row[i].Null = string(s), null
			off += w
		}
	}
}
