DROP TABLE IF EXISTS actions_archive;
