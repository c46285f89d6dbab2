/* When two ranks' call sites are the same site: the identity the report merges sites by and
 * the join matches records by. Private to the core. */
#ifndef LIBNOISETOOL_SITE_IDENTITY_H
#define LIBNOISETOOL_SITE_IDENTITY_H

struct nt_log_site;

/* Order of two call sites by identity: function, module file name (not its path: ranks may
 * load it from different places), offset. 0 when they are the same site. */
int nt_site_identity_cmp(const struct nt_log_site *a, const struct nt_log_site *b);

#endif /* LIBNOISETOOL_SITE_IDENTITY_H */
