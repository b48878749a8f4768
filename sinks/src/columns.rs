//! Column builders (rows → Arrow arrays) and column readers (Arrow arrays → row values) shared
//! by the datasets. Readers cast a column whose type differs from the schema (e.g. a part
//! rewritten by another tool with `large_string`) and treat a missing *nullable* column as all
//! nulls, so that columns added later stay readable from older parts.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, BooleanBuilder, Float64Array, ListBuilder, StringArray,
    StringBuilder, UInt32Array, UInt64Array,
};
use arrow::datatypes::{
    ArrowPrimitiveType, DataType, Field, Float64Type, SchemaRef, UInt32Type, UInt64Type,
};
use arrow::record_batch::RecordBatch;

use crate::error::RowError;

/// Name of the element field of every list column.
pub(crate) const LIST_ITEM: &str = "item";

pub(crate) fn field(name: &str, data_type: DataType, nullable: bool) -> Field {
    Field::new(name, data_type, nullable)
}

fn item_field(data_type: DataType) -> Field {
    Field::new(LIST_ITEM, data_type, false)
}

/// A list column whose elements are never null.
pub(crate) fn list_field(name: &str, item: DataType, nullable: bool) -> Field {
    Field::new_list(name, item_field(item), nullable)
}

// ---------------------------------------------------------------- builders

pub(crate) fn utf8<'a>(v: impl IntoIterator<Item = &'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(v))
}

pub(crate) fn opt_utf8<'a>(v: impl IntoIterator<Item = Option<&'a str>>) -> ArrayRef {
    Arc::new(v.into_iter().collect::<StringArray>())
}

pub(crate) fn u32s(v: impl IntoIterator<Item = u32>) -> ArrayRef {
    Arc::new(UInt32Array::from_iter_values(v))
}

pub(crate) fn opt_u32s(v: impl IntoIterator<Item = Option<u32>>) -> ArrayRef {
    Arc::new(v.into_iter().collect::<UInt32Array>())
}

pub(crate) fn u64s(v: impl IntoIterator<Item = u64>) -> ArrayRef {
    Arc::new(UInt64Array::from_iter_values(v))
}

pub(crate) fn opt_u64s(v: impl IntoIterator<Item = Option<u64>>) -> ArrayRef {
    Arc::new(v.into_iter().collect::<UInt64Array>())
}

pub(crate) fn f64s(v: impl IntoIterator<Item = f64>) -> ArrayRef {
    Arc::new(Float64Array::from_iter_values(v))
}

pub(crate) fn opt_f64s(v: impl IntoIterator<Item = Option<f64>>) -> ArrayRef {
    Arc::new(v.into_iter().collect::<Float64Array>())
}

pub(crate) fn bools(v: impl IntoIterator<Item = bool>) -> ArrayRef {
    Arc::new(v.into_iter().map(Some).collect::<BooleanArray>())
}

pub(crate) fn opt_bools(v: impl IntoIterator<Item = Option<bool>>) -> ArrayRef {
    Arc::new(v.into_iter().collect::<BooleanArray>())
}

pub(crate) fn list_utf8<'a>(v: impl IntoIterator<Item = &'a [String]>) -> ArrayRef {
    let mut b = ListBuilder::new(StringBuilder::new()).with_field(item_field(DataType::Utf8));
    for list in v {
        for s in list {
            b.values().append_value(s);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

/// A list column of a primitive type; `None` is a null list.
fn opt_primitive_list<'a, T>(v: impl IntoIterator<Item = Option<&'a [T::Native]>>) -> ArrayRef
where
    T: arrow::datatypes::ArrowPrimitiveType,
{
    let mut b = ListBuilder::new(arrow::array::PrimitiveBuilder::<T>::new())
        .with_field(item_field(T::DATA_TYPE));
    for list in v {
        match list {
            Some(list) => {
                b.values().append_slice(list);
                b.append(true);
            }
            None => b.append(false),
        }
    }
    Arc::new(b.finish())
}

pub(crate) fn opt_list_f64<'a>(v: impl IntoIterator<Item = Option<&'a [f64]>>) -> ArrayRef {
    opt_primitive_list::<arrow::datatypes::Float64Type>(v)
}

pub(crate) fn opt_list_u32<'a>(v: impl IntoIterator<Item = Option<&'a [u32]>>) -> ArrayRef {
    opt_primitive_list::<arrow::datatypes::UInt32Type>(v)
}

pub(crate) fn list_bool<'a>(v: impl IntoIterator<Item = &'a [bool]>) -> ArrayRef {
    let mut b = ListBuilder::new(BooleanBuilder::new()).with_field(item_field(DataType::Boolean));
    for list in v {
        for &x in list {
            b.values().append_value(x);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

// ---------------------------------------------------------------- readers

/// Reads the columns of one batch against the dataset schema.
pub(crate) struct Cols<'a> {
    batch: &'a RecordBatch,
    schema: SchemaRef,
}

fn require<T>(name: &str, v: Vec<Option<T>>) -> Result<Vec<T>, RowError> {
    v.into_iter()
        .enumerate()
        .map(|(i, x)| x.ok_or_else(|| RowError::new(name, format!("null at row {i}"))))
        .collect()
}

impl<'a> Cols<'a> {
    pub(crate) fn new(batch: &'a RecordBatch, schema: SchemaRef) -> Cols<'a> {
        Cols { batch, schema }
    }

    pub(crate) fn len(&self) -> usize {
        self.batch.num_rows()
    }

    /// The column cast to the schema's type; `None` when a nullable column is absent.
    fn array(&self, name: &str) -> Result<Option<ArrayRef>, RowError> {
        let expected = self
            .schema
            .field_with_name(name)
            .map_err(|e| RowError::new(name, format!("not in the dataset schema: {e}")))?;
        let Some(array) = self.batch.column_by_name(name) else {
            return if expected.is_nullable() {
                Ok(None)
            } else {
                Err(RowError::new(name, "missing column"))
            };
        };
        if array.data_type() == expected.data_type() {
            return Ok(Some(array.clone()));
        }
        arrow::compute::cast(array, expected.data_type())
            .map(Some)
            .map_err(|e| {
                RowError::new(
                    name,
                    format!(
                        "type {} does not convert to {}: {e}",
                        array.data_type(),
                        expected.data_type()
                    ),
                )
            })
    }

    fn wrong_type(name: &str, array: &dyn Array) -> RowError {
        RowError::new(name, format!("unexpected type {}", array.data_type()))
    }

    pub(crate) fn opt_utf8(&self, name: &str) -> Result<Vec<Option<String>>, RowError> {
        let Some(a) = self.array(name)? else {
            return Ok(vec![None; self.len()]);
        };
        let s = a
            .as_string_opt::<i32>()
            .ok_or_else(|| Self::wrong_type(name, &a))?;
        Ok(s.iter().map(|x| x.map(str::to_string)).collect())
    }

    pub(crate) fn utf8(&self, name: &str) -> Result<Vec<String>, RowError> {
        require(name, self.opt_utf8(name)?)
    }

    fn opt_prim<T: ArrowPrimitiveType>(
        &self,
        name: &str,
    ) -> Result<Vec<Option<T::Native>>, RowError> {
        let Some(a) = self.array(name)? else {
            return Ok(vec![None; self.len()]);
        };
        let p = a
            .as_primitive_opt::<T>()
            .ok_or_else(|| Self::wrong_type(name, &a))?;
        Ok(p.iter().collect())
    }

    pub(crate) fn opt_u32(&self, name: &str) -> Result<Vec<Option<u32>>, RowError> {
        self.opt_prim::<UInt32Type>(name)
    }

    pub(crate) fn u32(&self, name: &str) -> Result<Vec<u32>, RowError> {
        require(name, self.opt_u32(name)?)
    }

    pub(crate) fn opt_u64(&self, name: &str) -> Result<Vec<Option<u64>>, RowError> {
        self.opt_prim::<UInt64Type>(name)
    }

    pub(crate) fn u64(&self, name: &str) -> Result<Vec<u64>, RowError> {
        require(name, self.opt_u64(name)?)
    }

    pub(crate) fn opt_f64(&self, name: &str) -> Result<Vec<Option<f64>>, RowError> {
        self.opt_prim::<Float64Type>(name)
    }

    pub(crate) fn f64(&self, name: &str) -> Result<Vec<f64>, RowError> {
        require(name, self.opt_f64(name)?)
    }

    pub(crate) fn opt_bool(&self, name: &str) -> Result<Vec<Option<bool>>, RowError> {
        let Some(a) = self.array(name)? else {
            return Ok(vec![None; self.len()]);
        };
        let b = a
            .as_boolean_opt()
            .ok_or_else(|| Self::wrong_type(name, &a))?;
        Ok(b.iter().collect())
    }

    pub(crate) fn bool(&self, name: &str) -> Result<Vec<bool>, RowError> {
        require(name, self.opt_bool(name)?)
    }

    /// A list column: each non-null list decoded by `item` (which sees the list's values).
    fn opt_list<T>(
        &self,
        name: &str,
        item: impl Fn(&dyn Array) -> Option<Result<Vec<T>, String>>,
    ) -> Result<Vec<Option<Vec<T>>>, RowError> {
        let Some(a) = self.array(name)? else {
            return Ok((0..self.len()).map(|_| None).collect());
        };
        let list = a
            .as_list_opt::<i32>()
            .ok_or_else(|| Self::wrong_type(name, &a))?;
        let mut out = Vec::with_capacity(list.len());
        for i in 0..list.len() {
            if list.is_null(i) {
                out.push(None);
                continue;
            }
            let values = list.value(i);
            let decoded = item(values.as_ref())
                .ok_or_else(|| Self::wrong_type(name, &a))?
                .map_err(|m| RowError::new(name, format!("row {i}: {m}")))?;
            out.push(Some(decoded));
        }
        Ok(out)
    }

    pub(crate) fn list_utf8(&self, name: &str) -> Result<Vec<Vec<String>>, RowError> {
        let v = self.opt_list(name, |values| {
            let s = values.as_string_opt::<i32>()?;
            Some(
                s.iter()
                    .map(|x| x.map(str::to_string).ok_or_else(|| "null element".into()))
                    .collect(),
            )
        })?;
        require(name, v)
    }

    pub(crate) fn opt_list_f64(&self, name: &str) -> Result<Vec<Option<Vec<f64>>>, RowError> {
        self.opt_list(name, |values| {
            let p = values.as_primitive_opt::<Float64Type>()?;
            Some(
                p.iter()
                    .map(|x| x.ok_or_else(|| "null element".into()))
                    .collect(),
            )
        })
    }

    pub(crate) fn opt_list_u32(&self, name: &str) -> Result<Vec<Option<Vec<u32>>>, RowError> {
        self.opt_list(name, |values| {
            let p = values.as_primitive_opt::<UInt32Type>()?;
            Some(
                p.iter()
                    .map(|x| x.ok_or_else(|| "null element".into()))
                    .collect(),
            )
        })
    }

    pub(crate) fn list_bool(&self, name: &str) -> Result<Vec<Vec<bool>>, RowError> {
        let v = self.opt_list(name, |values| {
            let b = values.as_boolean_opt()?;
            Some(
                b.iter()
                    .map(|x| x.ok_or_else(|| "null element".into()))
                    .collect(),
            )
        })?;
        require(name, v)
    }
}

/// Takes the next value of a column iterator (all columns of a batch have its row count).
pub(crate) fn next<T: Default>(it: &mut impl Iterator<Item = T>) -> T {
    it.next().unwrap_or_default()
}
