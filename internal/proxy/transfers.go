package proxy

import (
	"time"

	"github.com/galeon-db/galeon/internal/admin"
)

// StateTransfer is a joining node's state transfer as the control plane
// reports it (see package transfer), for the admin table
// state_transfers.
type StateTransfer struct {
	Node, Kind, Donor string
	// Done and Total are bytes (SST) or write-sets (IST); Total 0 and
	// Percent -1 when unknown, ETA -1 when unknown.
	Done, Total int64
	Percent     float64
	Rate        float64
	ETA         time.Duration
	Since       time.Time
}

// SetStateTransfers replaces the transfers in progress.
func (p *Proxy) SetStateTransfers(ts []StateTransfer) {
	p.transfers.Store(&ts)
}

func (p *Proxy) stateTransfersTable() admin.Table {
	cols := []admin.Column{
		{Name: "node", Kind: admin.Text}, {Name: "kind", Kind: admin.Text}, {Name: "donor", Kind: admin.Text},
		{Name: "done", Kind: admin.Int}, {Name: "total", Kind: admin.Int}, {Name: "percent", Kind: admin.Float},
		{Name: "rate_per_s", Kind: admin.Float}, {Name: "eta_s", Kind: admin.Float}, {Name: "since", Kind: admin.Text},
	}
	return admin.Table{Name: "state_transfers", Columns: cols, Rows: func() [][]any {
		ts := p.transfers.Load()
		if ts == nil {
			return nil
		}
		out := make([][]any, 0, len(*ts))
		for _, t := range *ts {
			eta := -1.0
			if t.ETA >= 0 {
				eta = t.ETA.Seconds()
			}
			out = append(out, []any{t.Node, t.Kind, t.Donor, t.Done, t.Total, t.Percent, t.Rate, eta, t.Since.Format(time.RFC3339)})
		}
		return out
	}}
}
