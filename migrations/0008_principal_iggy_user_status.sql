-- Whose Iggy user a mapping names (docs/security.md "Principals -> Iggy identities"). [principals]
-- unmapped = "create" writes its mapping, with the random password, before it asks Iggy for the
-- user kafka.<name>, so that the password is durable first; this column records how far that got,
-- so that an Iggy user of that name the bridge did not create is never taken for its own, after a
-- crash between the two steps included:
--   'mapped'   an operator's mapping (`principals map`): the operator chose the Iggy user;
--   'pending'  the bridge wrote the mapping and has not seen Iggy create the user;
--   'created'  Iggy answered that it created the user: it is the bridge's;
--   'refused'  an Iggy user of that name exists that the bridge did not create: never used, its
--              permissions never written, until an operator maps or unmaps the principal.
-- Mappings the bridge made before this migration start as 'pending': the version that made them
-- took over an existing Iggy user of that name as its own, so each must prove itself (the
-- bridge's random password logs in) before it is used again.
ALTER TABLE principal_iggy_users ADD COLUMN iggy_user_status TEXT NOT NULL DEFAULT 'mapped' CHECK (iggy_user_status IN ('mapped', 'pending', 'created', 'refused'));
UPDATE principal_iggy_users SET iggy_user_status = 'pending' WHERE created_by_bridge <> 0;
