module github.com/galeon-db/galeon

go 1.24

require (
	filippo.io/edwards25519 v1.1.0 // indirect
	github.com/BurntSushi/toml v1.5.0 // indirect
	github.com/go-sql-driver/mysql v1.9.3 // indirect
)
