package supply

// Kind and Relation names of the supply schema.
const (
	KindSupplier      = "Supplier"
	KindWarehouse     = "Warehouse"
	KindPart          = "Part"
	KindPurchaseOrder = "PurchaseOrder"
	KindRiskFlag      = "RiskFlag"

	RelationSuppliedBy = "supplied_by"
	RelationStockedAt  = "stocked_at"
)

// Schema is the schema document of the supply Domain, as a client sends it.
const Schema = `{"kinds": [
  {"name": "Supplier", "title": "name", "attributes": [
    {"name": "name", "type": "text", "required": true, "search": true},
    {"name": "vat", "type": "text", "unique": true},
    {"name": "country", "type": "text", "indexed": true},
    {"name": "tier", "type": "enum", "values": ["gold", "silver", "bronze"]}]},
  {"name": "Warehouse", "title": "name", "attributes": [
    {"name": "name", "type": "text", "required": true, "search": true},
    {"name": "city", "type": "text", "indexed": true}]},
  {"name": "Part", "title": "name", "attributes": [
    {"name": "name", "type": "text", "required": true, "search": true},
    {"name": "maker", "type": "ref", "kind": "Supplier", "indexed": true},
    {"name": "weight_kg", "type": "number"},
    {"name": "category", "type": "text", "indexed": true}]},
  {"name": "PurchaseOrder", "title": "title", "attributes": [
    {"name": "title", "type": "text", "required": true, "search": true},
    {"name": "supplier", "type": "ref", "kind": "Supplier", "required": true, "indexed": true},
    {"name": "part", "type": "ref", "kind": "Part", "required": true, "indexed": true},
    {"name": "quantity", "type": "integer", "required": true},
    {"name": "ordered_on", "type": "date", "indexed": true}]},
  {"name": "RiskFlag", "title": "title", "attributes": [
    {"name": "title", "type": "text", "required": true, "search": true},
    {"name": "supplier", "type": "ref", "kind": "Supplier", "required": true, "indexed": true},
    {"name": "severity", "type": "enum", "values": ["low", "medium", "high", "critical"], "indexed": true},
    {"name": "raised_at", "type": "timestamp"}]}],
 "relations": [
  {"name": "supplied_by", "from": "Part", "to": "Supplier", "cardinality": "many", "inverse": "supplies"},
  {"name": "stocked_at", "from": "Part", "to": "Warehouse", "cardinality": "many", "inverse": "stocks"}]}`
