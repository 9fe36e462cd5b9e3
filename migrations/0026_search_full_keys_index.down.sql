-- The functions keep the signatures of migrations/functions/.
SELECT 1;
