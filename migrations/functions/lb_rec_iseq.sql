-- lb_rec_iseq: the trigger of mat_records that sets a row's iseq to its
-- seq (migrations/0023_record_iseq): on an insert that brings none, and on
-- an update that changes the Kind, title, search vector, indexed values,
-- deletion or creation of the row and leaves iseq as it was (the
-- triggers' WHEN conditions).
CREATE OR REPLACE FUNCTION lb_rec_iseq()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    NEW.iseq := NEW.seq;
    RETURN NEW;
END
$function$;
