package mysqlproto

import "errors"

// ChangeUser is what a COM_CHANGE_USER asks for: the account, the
// schema and, when sent, the character set.
type ChangeUser struct {
	User, DB string
	Charset  byte
}

// ParseChangeUser reads a COM_CHANGE_USER packet sent with caps.
func ParseChangeUser(pkt []byte, caps Capability) (ChangeUser, error) {
	var cu ChangeUser
	b := pkt[1:]
	user, n, err := ReadNullString(b)
	if err != nil {
		return cu, err
	}
	cu.User = string(user)
	b = b[n:]
	if len(b) == 0 {
		return cu, errors.New("truncated after user name")
	}
	if caps.Has(ClientSecureConnection) {
		l := int(b[0])
		if len(b) < 1+l {
			return cu, errors.New("truncated auth response")
		}
		b = b[1+l:]
	} else {
		_, n, err := ReadNullString(b)
		if err != nil {
			return cu, err
		}
		b = b[n:]
	}
	if len(b) > 0 {
		db, n, err := ReadNullString(b)
		if err != nil {
			return cu, err
		}
		cu.DB = string(db)
		b = b[n:]
	}
	if len(b) >= 2 {
		cu.Charset = b[0]
	}
	return cu, nil
}
