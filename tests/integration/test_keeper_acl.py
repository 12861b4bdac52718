"""ACLs and authentication: world, auth, digest and ip schemes, NoAuth on every
operation that needs a permission, InvalidACL, aversion, addAuth."""
import pytest
from kazoo.exceptions import AuthFailedError, BadVersionError, InvalidACLError, NoAuthError, NoNodeError
from kazoo.security import (ACL, CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE, Id,
                            Permissions, make_acl, make_digest_acl,
                            make_digest_acl_credential)

from zkwire import AUTH_XID, ERR, OP, ZKError, enc_create, enc_set_acl


@pytest.fixture
def other(shared_keeper, kazoo_factory):
    """A second client, without any authentication."""
    return kazoo_factory(shared_keeper)


def test_default_acl_is_world_anyone_all(zk, base):
    """A node created without an ACL gets world:anyone with all permissions (cdrwa = 31)."""
    zk.create(base + "/n")
    acls, stat = zk.get_acls(base + "/n")
    assert acls == [ACL(31, Id("world", "anyone"))]
    assert stat.aversion == 0 and stat == zk.exists(base + "/n")


def test_get_acls_missing_is_no_node(zk, base):
    """get_acls of a missing node fails with NoNode."""
    with pytest.raises(NoNodeError):
        zk.get_acls(base + "/none")


def test_set_acls_checks_and_bumps_aversion(zk, base):
    """set_acls with a stale aversion is BadVersion; a good one bumps aversion only."""
    zk.create(base + "/n", b"d")
    with pytest.raises(BadVersionError):
        zk.set_acls(base + "/n", READ_ACL_UNSAFE, version=5)
    stat = zk.set_acls(base + "/n", OPEN_ACL_UNSAFE, version=0)
    assert stat.aversion == 1 and stat.version == 0
    stat = zk.set_acls(base + "/n", READ_ACL_UNSAFE, version=1)
    assert stat.aversion == 2
    assert zk.get_acls(base + "/n")[0] == READ_ACL_UNSAFE


def test_read_only_world_acl_denies_writes(zk, base):
    """With world:anyone:r a node can be read but not written, have children or ACLs changed."""
    zk.create(base + "/ro", b"v", acl=READ_ACL_UNSAFE)
    assert zk.get(base + "/ro")[0] == b"v"
    assert zk.get_children(base + "/ro") == []
    with pytest.raises(NoAuthError):
        zk.set(base + "/ro", b"w")
    with pytest.raises(NoAuthError):
        zk.create(base + "/ro/child")
    with pytest.raises(NoAuthError):
        zk.set_acls(base + "/ro", OPEN_ACL_UNSAFE)
    assert zk.get(base + "/ro")[0] == b"v"


def test_each_permission_guards_its_operation(zk, base):
    """READ/WRITE/CREATE/DELETE/ADMIN each guard their operation (CREATE and DELETE on the parent); exists needs none."""
    everyone = Id("world", "anyone")
    cases = {
        "noread": Permissions.ALL & ~Permissions.READ,
        "nowrite": Permissions.ALL & ~Permissions.WRITE,
        "nocreate": Permissions.ALL & ~Permissions.CREATE,
        "nodelete": Permissions.ALL & ~Permissions.DELETE,
        "noadmin": Permissions.ALL & ~Permissions.ADMIN,
    }
    for name, perms in cases.items():
        zk.create(base + "/" + name + "/kid", makepath=True)
        zk.set_acls(base + "/" + name, [ACL(perms, everyone)])
    with pytest.raises(NoAuthError):
        zk.get(base + "/noread")
    with pytest.raises(NoAuthError):
        zk.get_children(base + "/noread")
    assert zk.exists(base + "/noread") is not None
    with pytest.raises(NoAuthError):
        zk.set(base + "/nowrite", b"x")
    with pytest.raises(NoAuthError):
        zk.create(base + "/nocreate/other")
    with pytest.raises(NoAuthError):
        zk.delete(base + "/nodelete/kid")
    with pytest.raises(NoAuthError):
        zk.set_acls(base + "/noadmin", OPEN_ACL_UNSAFE)
    # and each node still allows everything else
    zk.set(base + "/noread", b"ok")
    zk.get(base + "/nowrite")
    zk.delete(base + "/nocreate/kid")
    zk.create(base + "/nodelete/new")
    zk.set(base + "/noadmin", b"ok")


def test_delete_needs_parent_permission_not_the_nodes(zk, base):
    """Deleting a node is governed by its parent's ACL, not its own."""
    zk.create(base + "/p")
    zk.create(base + "/p/locked", acl=[ACL(0 | Permissions.READ, Id("world", "anyone"))])
    zk.delete(base + "/p/locked")
    assert zk.exists(base + "/p/locked") is None


def test_digest_acl_requires_matching_auth(zk, other, shared_keeper, kazoo_factory, base):
    """A digest ACL denies unauthenticated clients and wrong passwords and allows the right user."""
    acl = make_digest_acl("alice", "secret", all=True)
    zk.create(base + "/d", b"private", acl=[acl])
    with pytest.raises(NoAuthError):
        other.get(base + "/d")
    wrong = kazoo_factory(shared_keeper)
    wrong.add_auth("digest", "alice:wrong")
    with pytest.raises(NoAuthError):
        wrong.get(base + "/d")
    right = kazoo_factory(shared_keeper)
    right.add_auth("digest", "alice:secret")
    assert right.get(base + "/d")[0] == b"private"
    right.set(base + "/d", b"changed")
    assert right.get(base + "/d")[0] == b"changed"


def test_digest_auth_given_at_connect(zk, shared_keeper, kazoo_factory, base):
    """auth_data passed to the client (sent right after connect) is honoured."""
    zk.create(base + "/d", b"x", acl=[make_digest_acl("bob", "pw", read=True)])
    c = kazoo_factory(shared_keeper, auth_data=[("digest", "bob:pw")])
    assert c.get(base + "/d")[0] == b"x"


def test_auth_scheme_acl_expands_to_creator(shared_keeper, kazoo_factory, other, base, zk):
    """An 'auth' ACL is stored as the creator's digest identity and enforced for others."""
    creator = kazoo_factory(shared_keeper)
    creator.add_auth("digest", "carol:pw")
    creator.create(base + "/mine", b"m", acl=CREATOR_ALL_ACL)
    acls, _ = creator.get_acls(base + "/mine")
    assert acls == [ACL(31, Id("digest", make_digest_acl_credential("carol", "pw")))]
    assert make_digest_acl_credential("carol", "pw").startswith("carol:")
    with pytest.raises(NoAuthError):
        other.get(base + "/mine")
    assert creator.get(base + "/mine")[0] == b"m"


def test_auth_scheme_without_authentication_is_invalid_acl(zk, base):
    """Using the 'auth' ACL with no authenticated identity fails with InvalidACL."""
    with pytest.raises(InvalidACLError):
        zk.create(base + "/x", acl=CREATOR_ALL_ACL)
    assert zk.exists(base + "/x") is None


def test_get_acls_masks_digest_without_admin(zk, base, shared_keeper, kazoo_factory):
    """Without ADMIN permission getACL shows digest ids as 'user:x'; with it, the full hash."""
    cred = make_digest_acl_credential("dave", "pw")
    acl = [ACL(Permissions.ALL, Id("digest", cred)), ACL(Permissions.READ, Id("world", "anyone"))]
    zk.create(base + "/m", acl=acl)
    acls, _ = zk.get_acls(base + "/m")
    assert acls == [ACL(31, Id("digest", "dave:x")), ACL(1, Id("world", "anyone"))]
    admin = kazoo_factory(shared_keeper, auth_data=[("digest", "dave:pw")])
    assert admin.get_acls(base + "/m")[0] == acl


@pytest.mark.parametrize("acl", [
    [],
    [(31, "foo", "bar")],                       # unknown scheme
    [(31, "world", "someone")],                 # world has only 'anyone'
    [(31, "digest", "nocolon")],                # digest ids are user:hash
    [(31, "ip", "999.1.1.1")],
    [(31, "ip", "not-an-ip")],
    [(31, "ip", "127.0.0.1/40")],               # prefix length too long
    [(31, "auth", "")],                         # no authenticated id on this session
], ids=["empty", "unknown-scheme", "world-someone", "digest-nocolon", "ip-range", "ip-text",
        "ip-bad-prefix", "auth-unauthenticated"])
def test_invalid_acls_are_rejected(shared_keeper, wire_factory, zk, base, acl):
    """Malformed ACLs fail create and setACL with InvalidACL."""
    c = wire_factory(shared_keeper)
    assert c.err_of(OP.CREATE, enc_create(base + "/bad", acl=acl)) == ERR.INVALIDACL
    assert zk.exists(base + "/bad") is None
    zk.create(base + "/good")
    assert c.err_of(OP.SET_ACL, enc_set_acl(base + "/good", acl)) == ERR.INVALIDACL
    assert zk.get_acls(base + "/good")[0] == OPEN_ACL_UNSAFE


def test_ip_acl(zk, base):
    """ip ACLs match the client's address (127.0.0.1), exactly or by prefix."""
    zk.create(base + "/exact", b"1", acl=[make_acl("ip", "127.0.0.1", all=True)])
    zk.create(base + "/prefix", b"2", acl=[make_acl("ip", "127.0.0.0/8", all=True)])
    zk.create(base + "/elsewhere", b"3", acl=[make_acl("ip", "10.1.2.3", all=True)])
    zk.create(base + "/elsenet", b"4", acl=[make_acl("ip", "192.168.0.0/16", all=True)])
    assert zk.get(base + "/exact")[0] == b"1"
    assert zk.get(base + "/prefix")[0] == b"2"
    with pytest.raises(NoAuthError):
        zk.get(base + "/elsewhere")
    with pytest.raises(NoAuthError):
        zk.get(base + "/elsenet")


def test_several_identities_on_one_session(shared_keeper, kazoo_factory, zk, base):
    """A session may add several digest identities; any matching one grants access."""
    zk.create(base + "/a", b"a", acl=[make_digest_acl("u1", "p1", all=True)])
    zk.create(base + "/b", b"b", acl=[make_digest_acl("u2", "p2", all=True)])
    c = kazoo_factory(shared_keeper)
    c.add_auth("digest", "u1:p1")
    c.add_auth("digest", "u2:p2")
    assert c.get(base + "/a")[0] == b"a" and c.get(base + "/b")[0] == b"b"


def test_unknown_auth_scheme_fails_and_closes(shared_keeper, wire_factory):
    """addAuth with an unknown scheme answers AuthFailed (xid -4) and closes the connection."""
    c = wire_factory(shared_keeper)
    with pytest.raises(ZKError) as e:
        c.add_auth("nosuchscheme", b"whatever")
    assert e.value.code == ERR.AUTHFAILED
    assert e.value.header.xid == AUTH_XID
    c.wait_closed(5)


def test_kazoo_sees_auth_failed(shared_keeper, kazoo_factory):
    """kazoo's add_auth with an unknown scheme raises AuthFailedError."""
    c = kazoo_factory(shared_keeper)
    with pytest.raises(AuthFailedError):
        c.add_auth("nosuchscheme", "x")


def test_noauth_in_transaction_rolls_back(zk, other, base):
    """A transaction with an op the client may not do fails with NoAuth and applies nothing."""
    zk.create(base + "/ro", acl=READ_ACL_UNSAFE)
    t = other.transaction()
    t.create(base + "/first")
    t.set_data(base + "/ro", b"x")
    results = t.commit()
    assert [type(r).__name__ for r in results] == ["RolledBackError", "NoAuthError"]
    assert other.exists(base + "/first") is None
