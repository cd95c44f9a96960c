package galera

// WANProfile is wsrep_provider_options for nodes linked by a WAN (tens
// of milliseconds between sites, occasional spikes of seconds): Galera's
// own multi-data-centre guidance (Codership, "Configuring WAN"). The
// trade-off is deliberate: a node is suspected only after 30 s without
// a word, so a latency spike or a short link failure never evicts a
// node (and never moves the writer), while a real site loss takes about
// that long to be seen.
//
//   - evs.keepalive_period PT3S, evs.suspect_timeout PT30S,
//     evs.inactive_timeout PT1M, evs.install_timeout PT1M: failure
//     detection that tolerates spikes;
//   - evs.send_window 512, evs.user_send_window 512: enough messages in
//     flight to fill a long link (the defaults, 4 and 2, cap throughput
//     at a few round trips' worth);
//   - gcs.fc_limit 128, gcs.fc_factor 0.8: flow control that does not
//     pause the cluster for every queue a round trip builds up;
//   - gmcast.peer_timeout PT15S: slower links get time to connect.
//
// gcache.size is not in the profile because it depends on the load: a
// site that comes back rejoins by IST only while a donor's gcache still
// holds what it missed, so it must hold write bytes per second times the
// longest site outage to ride out. `galeon plan --discovery` measures how
// long the cluster's gcaches cover at its current commit rate.
func WANProfile() map[string]string {
	return map[string]string{
		"evs.keepalive_period": "PT3S",
		"evs.suspect_timeout":  "PT30S",
		"evs.inactive_timeout": "PT1M",
		"evs.install_timeout":  "PT1M",
		"evs.send_window":      "512",
		"evs.user_send_window": "512",
		"gcs.fc_limit":         "128",
		"gcs.fc_factor":        "0.8",
		"gmcast.peer_timeout":  "PT15S",
	}
}
