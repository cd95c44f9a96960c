package mysqlproto

// Capability is a set of CLIENT_* capability flags. The low 32 bits are
// MySQL's; bits 32-63 hold MariaDB's extended capabilities, which travel in
// otherwise reserved handshake bytes when CLIENT_MYSQL is cleared.
type Capability uint64

// MySQL capability flags (mysql_com.h).
const (
	ClientLongPassword               Capability = 1 << 0  // CLIENT_LONG_PASSWORD
	ClientFoundRows                  Capability = 1 << 1  // CLIENT_FOUND_ROWS
	ClientLongFlag                   Capability = 1 << 2  // CLIENT_LONG_FLAG
	ClientConnectWithDB              Capability = 1 << 3  // CLIENT_CONNECT_WITH_DB
	ClientNoSchema                   Capability = 1 << 4  // CLIENT_NO_SCHEMA
	ClientCompress                   Capability = 1 << 5  // CLIENT_COMPRESS (not supported by this package)
	ClientODBC                       Capability = 1 << 6  // CLIENT_ODBC
	ClientLocalFiles                 Capability = 1 << 7  // CLIENT_LOCAL_FILES
	ClientIgnoreSpace                Capability = 1 << 8  // CLIENT_IGNORE_SPACE
	ClientProtocol41                 Capability = 1 << 9  // CLIENT_PROTOCOL_41
	ClientInteractive                Capability = 1 << 10 // CLIENT_INTERACTIVE
	ClientSSL                        Capability = 1 << 11 // CLIENT_SSL
	ClientIgnoreSigpipe              Capability = 1 << 12 // CLIENT_IGNORE_SIGPIPE
	ClientTransactions               Capability = 1 << 13 // CLIENT_TRANSACTIONS
	ClientReserved                   Capability = 1 << 14 // CLIENT_RESERVED
	ClientSecureConnection           Capability = 1 << 15 // CLIENT_SECURE_CONNECTION (CLIENT_RESERVED2)
	ClientMultiStatements            Capability = 1 << 16 // CLIENT_MULTI_STATEMENTS
	ClientMultiResults               Capability = 1 << 17 // CLIENT_MULTI_RESULTS
	ClientPSMultiResults             Capability = 1 << 18 // CLIENT_PS_MULTI_RESULTS
	ClientPluginAuth                 Capability = 1 << 19 // CLIENT_PLUGIN_AUTH
	ClientConnectAttrs               Capability = 1 << 20 // CLIENT_CONNECT_ATTRS
	ClientPluginAuthLenencClientData Capability = 1 << 21 // CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
	ClientCanHandleExpiredPasswords  Capability = 1 << 22 // CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS
	ClientSessionTrack               Capability = 1 << 23 // CLIENT_SESSION_TRACK
	ClientDeprecateEOF               Capability = 1 << 24 // CLIENT_DEPRECATE_EOF
	ClientOptionalResultsetMetadata  Capability = 1 << 25 // CLIENT_OPTIONAL_RESULTSET_METADATA
	ClientZstdCompressionAlgorithm   Capability = 1 << 26 // CLIENT_ZSTD_COMPRESSION_ALGORITHM
	ClientQueryAttributes            Capability = 1 << 27 // CLIENT_QUERY_ATTRIBUTES
	ClientMultiFactorAuthentication  Capability = 1 << 28 // MULTI_FACTOR_AUTHENTICATION
	ClientCapabilityExtension        Capability = 1 << 29 // CLIENT_CAPABILITY_EXTENSION
	ClientSSLVerifyServerCert        Capability = 1 << 30 // CLIENT_SSL_VERIFY_SERVER_CERT
	ClientRememberOptions            Capability = 1 << 31 // CLIENT_REMEMBER_OPTIONS
)

// ClientMySQL is MariaDB's name for bit 0. MySQL servers and clients (and
// MariaDB before 10.2) always set it; MariaDB 10.2+ servers clear it to say
// "my extended capabilities are in the handshake's reserved bytes", and
// MariaDB clients clear it in their reply to send theirs back.
const ClientMySQL = ClientLongPassword

// MariaDB extended capability flags (bits 32+ of Capability).
const (
	MariaDBClientProgress           Capability = 1 << 32 // MARIADB_CLIENT_PROGRESS
	MariaDBClientComMulti           Capability = 1 << 33 // MARIADB_CLIENT_COM_MULTI
	MariaDBClientStmtBulkOperations Capability = 1 << 34 // MARIADB_CLIENT_STMT_BULK_OPERATIONS
	MariaDBClientExtendedMetadata   Capability = 1 << 35 // MARIADB_CLIENT_EXTENDED_METADATA
	MariaDBClientCacheMetadata      Capability = 1 << 36 // MARIADB_CLIENT_CACHE_METADATA
	MariaDBClientBulkUnitResults    Capability = 1 << 37 // MARIADB_CLIENT_BULK_UNIT_RESULTS
)

// Has reports whether every flag in f is set in c.
func (c Capability) Has(f Capability) bool { return c&f == f }

// DefaultServerCapabilities is what a proxy can advertise to clients with
// this package: everything it can frame and relay. It leaves out
// compression, CLIENT_OPTIONAL_RESULTSET_METADATA and CLIENT_QUERY_ATTRIBUTES
// (supported by the codec but policy for the caller), and keeps
// CLIENT_MYSQL set (MySQL-style handshake). Add ClientSSL when TLS is
// configured.
const DefaultServerCapabilities = ClientLongPassword | ClientFoundRows | ClientLongFlag |
	ClientConnectWithDB | ClientNoSchema | ClientODBC | ClientLocalFiles | ClientIgnoreSpace |
	ClientProtocol41 | ClientInteractive | ClientIgnoreSigpipe | ClientTransactions |
	ClientReserved | ClientSecureConnection | ClientMultiStatements | ClientMultiResults |
	ClientPSMultiResults | ClientPluginAuth | ClientConnectAttrs |
	ClientPluginAuthLenencClientData | ClientCanHandleExpiredPasswords | ClientSessionTrack |
	ClientDeprecateEOF

// DefaultClientCapabilities is what [ClientAuth] asks a backend for when
// ClientConfig.Capabilities is zero. It is intersected with the server's
// flags; ClientConnectWithDB, ClientConnectAttrs and ClientSSL are added or
// removed according to the config.
const DefaultClientCapabilities = ClientLongPassword | ClientFoundRows | ClientLongFlag |
	ClientProtocol41 | ClientTransactions | ClientSecureConnection | ClientMultiStatements |
	ClientMultiResults | ClientPSMultiResults | ClientPluginAuth |
	ClientPluginAuthLenencClientData | ClientSessionTrack | ClientDeprecateEOF
