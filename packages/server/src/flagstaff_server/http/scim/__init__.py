"""The SCIM 2.0 service at `/scim/v2` (RFC 7643/7644): users become members, groups teams."""
