DROP TABLE periodic_reports;
