//! Differential rendering on a real Vulkan driver (Mesa's lavapipe, CPU): draws
//! one pipeline with deterministic vertices, buffers, push constants and
//! textures, and returns every pixel of every colour attachment, so an original
//! and an optimized pipeline can be compared pixel by pixel.
#![allow(dead_code)]

pub mod harness;
pub mod reflect;

use std::collections::BTreeMap;
use std::ffi::CStr;

use ash::vk;
use reflect::{Desc, Kind, Reflection, Word, XfbBuffer};

/// Framebuffer width and height (small: lavapipe rasterizes on the CPU).
pub const SIZE: u32 = 32;

/// The loaded driver.
pub struct Gpu {
    _entry: ash::Entry,
    instance: ash::Instance,
    pdev: vk::PhysicalDevice,
    device: ash::Device,
    queue: vk::Queue,
    qfi: u32,
    mem: vk::PhysicalDeviceMemoryProperties,
    /// `VK_EXT_transform_feedback`, when the driver has it (enabled then).
    xfb: Option<ash::ext::transform_feedback::Device>,
    /// Optional features the driver has (all enabled).
    pub features: Features,
    /// The driver's version (Mesa's major, minor, patch for lavapipe).
    pub version: (u32, u32, u32),
}

/// Optional features a test may need, as the driver reports them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Features {
    /// `transformFeedback` of `VK_EXT_transform_feedback`.
    pub transform_feedback: bool,
    /// `storageInputOutput16` with `shaderFloat16` and `shaderInt16`: 16-bit
    /// inputs and outputs as the export writes them (it declares `Float16` and
    /// `Int16` to bitcast 16-bit values).
    pub sixteen_bit_io: bool,
    /// `shaderFloat64`.
    pub float64: bool,
}

/// Shader stages of one pipeline (SPIR-V words).
#[derive(Clone, Debug, Default)]
pub struct Stages {
    pub vert: Vec<u32>,
    pub tesc: Option<Vec<u32>>,
    pub tese: Option<Vec<u32>>,
    pub geom: Option<Vec<u32>>,
    pub frag: Vec<u32>,
}

impl Stages {
    /// The VS and FS of `p`'s standalone export (`export::standalone_to_spirv`),
    /// which the test needs to succeed.
    pub fn standalone(p: &varysat::ir::Pipeline) -> Stages {
        let (vert, frag) = varysat::export::standalone_to_spirv(p).expect("exports");
        Stages {
            vert,
            frag,
            ..Default::default()
        }
    }

    fn all(&self) -> Vec<(vk::ShaderStageFlags, &Vec<u32>)> {
        let mut v = vec![(vk::ShaderStageFlags::VERTEX, &self.vert)];
        if let Some(t) = &self.tesc {
            v.push((vk::ShaderStageFlags::TESSELLATION_CONTROL, t));
        }
        if let Some(t) = &self.tese {
            v.push((vk::ShaderStageFlags::TESSELLATION_EVALUATION, t));
        }
        if let Some(g) = &self.geom {
            v.push((vk::ShaderStageFlags::GEOMETRY, g));
        }
        v.push((vk::ShaderStageFlags::FRAGMENT, &self.frag));
        v
    }

    /// The last stage before rasterization: the one whose outputs transform
    /// feedback captures.
    fn last_before_raster(&self) -> &[u32] {
        self.geom
            .as_deref()
            .or(self.tese.as_deref())
            .unwrap_or(&self.vert)
    }
}

/// What both pipelines of a comparison share: the union of their resources.
pub struct Setup {
    pub bindings: BTreeMap<(u32, u32), (Desc, u32)>,
    pub push_size: u32,
    pub inputs: BTreeMap<u32, (Kind, u32)>,
    pub outputs: BTreeMap<u32, (Kind, u32)>,
    /// Location → bits of a vertex input's scalars (32 or 64).
    pub input_bits: BTreeMap<u32, u32>,
    pub topology: vk::PrimitiveTopology,
    pub patch_vertices: u32,
    /// The transform feedback buffers the last pre-rasterization stage captures
    /// to, as the first pipeline that captures declares them.
    pub xfb: BTreeMap<u32, XfbBuffer>,
}

impl Setup {
    /// The union of what every module of both pipelines declares.
    pub fn of(
        pipelines: &[&Stages],
        topology: vk::PrimitiveTopology,
        patch_vertices: u32,
    ) -> Setup {
        let mut s = Setup {
            bindings: BTreeMap::new(),
            push_size: 0,
            inputs: BTreeMap::new(),
            outputs: BTreeMap::new(),
            input_bits: BTreeMap::new(),
            topology,
            patch_vertices,
            xfb: BTreeMap::new(),
        };
        for p in pipelines {
            for (b, x) in reflect::captures(p.last_before_raster()) {
                let e = s.xfb.entry(b).or_insert(x.clone());
                e.stride = e.stride.max(x.stride);
            }
            for (_, words) in p.all() {
                let r: Reflection = reflect::reflect(words);
                for (k, (d, n)) in r.bindings {
                    let e = s.bindings.entry(k).or_insert((d, n));
                    if let (Desc::Uniform { size: a }, Desc::Uniform { size: b }) = (&mut e.0, d) {
                        *a = (*a).max(b);
                    }
                }
                s.push_size = s.push_size.max(r.push_size);
                s.inputs.extend(r.inputs);
                s.input_bits.extend(r.input_bits);
                s.outputs.extend(r.outputs);
            }
        }
        s
    }
}

/// One colour attachment read back (four 32-bit words per pixel), or one
/// transform feedback buffer (`capture` set, `location` the buffer number).
#[derive(Clone, Debug, PartialEq)]
pub struct Attachment {
    pub location: u32,
    pub kind: Kind,
    pub words: Vec<u32>,
    /// For a transform feedback buffer: how each word of a record compares
    /// (one entry per word of the stride; `None`: nothing captures it, it must
    /// keep [`XFB_FILL`]).
    pub capture: Option<Vec<Option<Word>>>,
}

/// What every transform feedback buffer holds before the draw: a word no
/// capture of the tests writes by chance, so a capture written to the wrong place
/// or not at all shows.
pub const XFB_FILL: u32 = 0xdead_beef;

/// Records each transform feedback buffer holds: the 48 vertices drawn, or what
/// a geometry shader or tessellation makes of them; more are not captured.
pub const XFB_RECORDS: u32 = 1024;

/// Deterministic pseudo-random words (xorshift), the same on every run.
pub fn pattern(seed: u32, n: usize) -> Vec<u32> {
    let mut x = seed.wrapping_mul(2654435761).max(1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        })
        .collect()
}

/// Uniform data: every vec4 row `r` of a 64-byte block is row `r` of an identity
/// matrix plus a small perturbation, so matrices put geometry on screen and
/// scalars get moderate values.
fn uniform_words(n: usize, seed: u32) -> Vec<u32> {
    let noise = pattern(seed, n);
    (0..n)
        .map(|i| {
            let diag = if i % 4 == (i / 4) % 4 { 1.0 } else { 0.0 };
            let small = (noise[i] % 1000) as f32 / 10000.0;
            (diag + small).to_bits()
        })
        .collect()
}

/// The Mesa release of the driver, read from its `driverInfo` ("Mesa 25.0.7-2~bpo12+1
/// (LLVM 15.0.6)"; lavapipe's `driverVersion` is 1, not the release), or zeros.
fn mesa_version(instance: &ash::Instance, pdev: vk::PhysicalDevice) -> (u32, u32, u32) {
    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut driver);
    unsafe { instance.get_physical_device_properties2(pdev, &mut p2) };
    let info = driver
        .driver_info_as_c_str()
        .map(|c| c.to_string_lossy().into_owned());
    let info = info.unwrap_or_default();
    let release = info.strip_prefix("Mesa ").unwrap_or("");
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse().unwrap_or(0));
    let mut next = || parts.next().unwrap_or(0);
    (next(), next(), next())
}

impl Gpu {
    /// Opens lavapipe, or says why not.
    pub fn lavapipe() -> Result<Gpu, String> {
        let entry = unsafe { ash::Entry::load() }.map_err(|e| format!("no Vulkan loader: {e}"))?;
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
        let ici = vk::InstanceCreateInfo::default().application_info(&app);
        let instance = unsafe { entry.create_instance(&ici, None) }
            .map_err(|e| format!("vkCreateInstance: {e}"))?;
        let devs = unsafe { instance.enumerate_physical_devices() }.map_err(|e| e.to_string())?;
        let pdev = devs
            .into_iter()
            .find(|d| {
                let p = unsafe { instance.get_physical_device_properties(*d) };
                let name = unsafe { CStr::from_ptr(p.device_name.as_ptr()) }
                    .to_string_lossy()
                    .into_owned();
                p.device_type == vk::PhysicalDeviceType::CPU && name.contains("llvmpipe")
            })
            .ok_or("no lavapipe device (install mesa-vulkan-drivers)")?;
        let qfi = unsafe { instance.get_physical_device_queue_family_properties(pdev) }
            .iter()
            .position(|q| q.queue_flags.contains(vk::QueueFlags::GRAPHICS))
            .ok_or("no graphics queue")? as u32;
        let device_exts = unsafe { instance.enumerate_device_extension_properties(pdev) }
            .map_err(|e| e.to_string())?;
        let has = |name: &std::ffi::CStr| {
            device_exts
                .iter()
                .any(|e| e.extension_name_as_c_str() == Ok(name))
        };
        let has_xfb_ext = has(ash::ext::transform_feedback::NAME);
        // Float atomics on buffers and images (`OpAtomicFAddEXT`, ...).
        let has_float_atomics = has(ash::ext::shader_atomic_float::NAME);
        let features = {
            let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
            let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
            let mut fx = vk::PhysicalDeviceTransformFeedbackFeaturesEXT::default();
            let mut f2 = vk::PhysicalDeviceFeatures2::default()
                .push_next(&mut f11)
                .push_next(&mut f12);
            if has_xfb_ext {
                f2 = f2.push_next(&mut fx);
            }
            unsafe { instance.get_physical_device_features2(pdev, &mut f2) };
            let float64 = f2.features.shader_float64 == vk::TRUE;
            let int16 = f2.features.shader_int16 == vk::TRUE;
            Features {
                transform_feedback: fx.transform_feedback == vk::TRUE,
                sixteen_bit_io: f11.storage_input_output16 == vk::TRUE
                    && f12.shader_float16 == vk::TRUE
                    && int16,
                float64,
            }
        };
        // Every feature the driver has is enabled: the queried structures are
        // passed to vkCreateDevice as they come back.
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut fx = vk::PhysicalDeviceTransformFeedbackFeaturesEXT::default();
        let mut fa = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut f11)
            .push_next(&mut f12);
        if has_xfb_ext {
            f2 = f2.push_next(&mut fx);
        }
        if has_float_atomics {
            f2 = f2.push_next(&mut fa);
        }
        unsafe { instance.get_physical_device_features2(pdev, &mut f2) };
        let prio = [1.0f32];
        let qci = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(qfi)
            .queue_priorities(&prio)];
        let exts: Vec<*const std::ffi::c_char> = [
            (has_xfb_ext, ash::ext::transform_feedback::NAME),
            (has_float_atomics, ash::ext::shader_atomic_float::NAME),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, name)| name.as_ptr())
        .collect();
        let dci = vk::DeviceCreateInfo::default()
            .queue_create_infos(&qci)
            .push_next(&mut f2)
            .enabled_extension_names(&exts);
        let device = unsafe { instance.create_device(pdev, &dci, None) }
            .map_err(|e| format!("vkCreateDevice: {e}"))?;
        let queue = unsafe { device.get_device_queue(qfi, 0) };
        let mem = unsafe { instance.get_physical_device_memory_properties(pdev) };
        let version = mesa_version(&instance, pdev);
        let xfb = features
            .transform_feedback
            .then(|| ash::ext::transform_feedback::Device::new(&instance, &device));
        Ok(Gpu {
            _entry: entry,
            instance,
            pdev,
            device,
            queue,
            qfi,
            mem,
            xfb,
            features,
            version,
        })
    }

    /// Whether the driver reads vertex attributes of format `f` from a buffer.
    pub fn vertex_format(&self, f: vk::Format) -> bool {
        unsafe {
            self.instance
                .get_physical_device_format_properties(self.pdev, f)
        }
        .buffer_features
        .contains(vk::FormatFeatureFlags::VERTEX_BUFFER)
    }

    fn memory_type(&self, bits: u32, flags: vk::MemoryPropertyFlags) -> u32 {
        (0..self.mem.memory_type_count)
            .find(|i| {
                bits & (1 << i) != 0
                    && self.mem.memory_types[*i as usize]
                        .property_flags
                        .contains(flags)
            })
            .unwrap_or(0)
    }

    fn alloc(
        &self,
        req: vk::MemoryRequirements,
        r: &mut Resources,
    ) -> Result<vk::DeviceMemory, String> {
        let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(self.memory_type(req.memory_type_bits, host));
        let m = unsafe { self.device.allocate_memory(&info, None) }.map_err(|e| e.to_string())?;
        r.memory.push(m);
        Ok(m)
    }

    /// A host-visible buffer holding `words`.
    fn buffer(
        &self,
        usage: vk::BufferUsageFlags,
        words: &[u32],
        r: &mut Resources,
    ) -> Result<vk::Buffer, String> {
        let size = (words.len().max(1) * 4) as u64;
        let info = vk::BufferCreateInfo::default().size(size).usage(usage);
        let b = unsafe { self.device.create_buffer(&info, None) }.map_err(|e| e.to_string())?;
        r.buffers.push(b);
        let req = unsafe { self.device.get_buffer_memory_requirements(b) };
        let m = self.alloc(req, r)?;
        unsafe {
            self.device
                .bind_buffer_memory(b, m, 0)
                .map_err(|e| e.to_string())?;
            let p = self
                .device
                .map_memory(m, 0, size, vk::MemoryMapFlags::empty())
                .map_err(|e| e.to_string())?;
            std::ptr::copy_nonoverlapping(words.as_ptr(), p as *mut u32, words.len());
            self.device.unmap_memory(m);
        }
        Ok(b)
    }

    fn read(&self, m: vk::DeviceMemory, words: usize) -> Result<Vec<u32>, String> {
        unsafe {
            let p = self
                .device
                .map_memory(m, 0, (words * 4) as u64, vk::MemoryMapFlags::empty())
                .map_err(|e| e.to_string())?;
            let v = std::slice::from_raw_parts(p as *const u32, words).to_vec();
            self.device.unmap_memory(m);
            Ok(v)
        }
    }

    /// An image (linear tiling, host-visible, general layout).
    #[allow(clippy::too_many_arguments)]
    fn image(
        &self,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
        extent: vk::Extent3D,
        layers: u32,
        ty: vk::ImageType,
        flags: vk::ImageCreateFlags,
        r: &mut Resources,
    ) -> Result<(vk::Image, vk::DeviceMemory), String> {
        let info = vk::ImageCreateInfo::default()
            .image_type(ty)
            .flags(flags)
            .format(format)
            .extent(extent)
            .mip_levels(1)
            .array_layers(layers)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        let i = unsafe { self.device.create_image(&info, None) }.map_err(|e| e.to_string())?;
        r.images.push(i);
        let req = unsafe { self.device.get_image_memory_requirements(i) };
        let m = self.alloc(req, r)?;
        unsafe { self.device.bind_image_memory(i, m, 0) }.map_err(|e| e.to_string())?;
        Ok((i, m))
    }
}

/// What an uploaded image is: dimensionality, edge length, texel format, and
/// whether shaders write it (a storage image) or only sample it.
struct ImageShape {
    dim: rspirv::spirv::Dim,
    arrayed: bool,
    size: u32,
    format: vk::Format,
    storage: bool,
}

/// Everything one render creates, destroyed afterwards.
#[derive(Default)]
struct Resources {
    memory: Vec<vk::DeviceMemory>,
    buffers: Vec<vk::Buffer>,
    images: Vec<vk::Image>,
    views: Vec<vk::ImageView>,
    samplers: Vec<vk::Sampler>,
    modules: Vec<vk::ShaderModule>,
    set_layouts: Vec<vk::DescriptorSetLayout>,
    pools: Vec<vk::DescriptorPool>,
    layouts: Vec<vk::PipelineLayout>,
    passes: Vec<vk::RenderPass>,
    framebuffers: Vec<vk::Framebuffer>,
    pipelines: Vec<vk::Pipeline>,
    cmd_pools: Vec<vk::CommandPool>,
    fences: Vec<vk::Fence>,
}

impl Drop for Gpu {
    fn drop(&mut self) {
        unsafe {
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

fn attachment_format(k: Kind) -> vk::Format {
    match k {
        Kind::Float => vk::Format::R32G32B32A32_SFLOAT,
        Kind::Sint => vk::Format::R32G32B32A32_SINT,
        Kind::Uint => vk::Format::R32G32B32A32_UINT,
    }
}

/// One transform feedback buffer of a render.
struct Capture {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    /// Bytes per record.
    stride: u32,
    /// How each word of a record compares (`None`: nothing captures it).
    words: Vec<Option<Word>>,
}

/// One pending texture upload.
struct Upload {
    image: vk::Image,
    staging: vk::Buffer,
    extent: vk::Extent3D,
    layers: u32,
    /// Storage images end in the general layout, read and written by shaders;
    /// textures in the read-only one.
    storage: bool,
}

impl Gpu {
    fn destroy(&self, r: Resources) {
        unsafe {
            let d = &self.device;
            let _ = d.device_wait_idle();
            r.fences.iter().for_each(|x| d.destroy_fence(*x, None));
            r.cmd_pools
                .iter()
                .for_each(|x| d.destroy_command_pool(*x, None));
            r.pipelines
                .iter()
                .for_each(|x| d.destroy_pipeline(*x, None));
            r.framebuffers
                .iter()
                .for_each(|x| d.destroy_framebuffer(*x, None));
            r.passes
                .iter()
                .for_each(|x| d.destroy_render_pass(*x, None));
            r.layouts
                .iter()
                .for_each(|x| d.destroy_pipeline_layout(*x, None));
            r.pools
                .iter()
                .for_each(|x| d.destroy_descriptor_pool(*x, None));
            r.set_layouts
                .iter()
                .for_each(|x| d.destroy_descriptor_set_layout(*x, None));
            r.modules
                .iter()
                .for_each(|x| d.destroy_shader_module(*x, None));
            r.samplers.iter().for_each(|x| d.destroy_sampler(*x, None));
            r.views.iter().for_each(|x| d.destroy_image_view(*x, None));
            r.images.iter().for_each(|x| d.destroy_image(*x, None));
            r.buffers.iter().for_each(|x| d.destroy_buffer(*x, None));
            r.memory.iter().for_each(|x| d.free_memory(*x, None));
        }
    }

    /// Renders one pipeline and reads back every colour attachment.
    pub fn render(&self, stages: &Stages, setup: &Setup) -> Result<Vec<Attachment>, String> {
        let mut r = Resources::default();
        let out = self.render_in(stages, setup, &mut r);
        self.destroy(r);
        out
    }

    fn descriptors(
        &self,
        setup: &Setup,
        r: &mut Resources,
        uploads: &mut Vec<Upload>,
    ) -> Result<(Vec<vk::DescriptorSetLayout>, Vec<vk::DescriptorSet>), String> {
        let d = &self.device;
        let max_set = setup
            .bindings
            .keys()
            .map(|(s, _)| *s + 1)
            .max()
            .unwrap_or(0);
        let mut layouts = vec![];
        let mut sizes: Vec<vk::DescriptorPoolSize> = vec![];
        for set in 0..max_set {
            let binds: Vec<vk::DescriptorSetLayoutBinding> = setup
                .bindings
                .iter()
                .filter(|((s, _), _)| *s == set)
                .map(|((_, b), (desc, n))| {
                    let ty = desc_type(desc);
                    sizes.push(vk::DescriptorPoolSize {
                        ty,
                        descriptor_count: *n,
                    });
                    vk::DescriptorSetLayoutBinding::default()
                        .binding(*b)
                        .descriptor_type(ty)
                        .descriptor_count(*n)
                        .stage_flags(vk::ShaderStageFlags::ALL_GRAPHICS)
                })
                .collect();
            let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&binds);
            let l = unsafe { d.create_descriptor_set_layout(&info, None) }
                .map_err(|e| e.to_string())?;
            r.set_layouts.push(l);
            layouts.push(l);
        }
        if max_set == 0 {
            return Ok((layouts, vec![]));
        }
        if sizes.is_empty() {
            sizes.push(vk::DescriptorPoolSize {
                ty: vk::DescriptorType::UNIFORM_BUFFER,
                descriptor_count: 1,
            });
        }
        let pi = vk::DescriptorPoolCreateInfo::default()
            .max_sets(max_set)
            .pool_sizes(&sizes);
        let pool = unsafe { d.create_descriptor_pool(&pi, None) }.map_err(|e| e.to_string())?;
        r.pools.push(pool);
        let ai = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(pool)
            .set_layouts(&layouts);
        let sets = unsafe { d.allocate_descriptor_sets(&ai) }.map_err(|e| e.to_string())?;
        for (((set, binding), (desc, n)), seed) in setup.bindings.iter().zip(1u32..) {
            self.write_binding(sets[*set as usize], *binding, desc, *n, seed, r, uploads)?;
        }
        Ok((layouts, sets))
    }

    #[allow(clippy::too_many_arguments)]
    fn write_binding(
        &self,
        set: vk::DescriptorSet,
        binding: u32,
        desc: &Desc,
        n: u32,
        seed: u32,
        r: &mut Resources,
        uploads: &mut Vec<Upload>,
    ) -> Result<(), String> {
        let d = &self.device;
        let ty = desc_type(desc);
        let mut buf_infos = vec![];
        let mut img_infos = vec![];
        for k in 0..n {
            match desc {
                Desc::Uniform { size } => {
                    let words = uniform_words((*size as usize).div_ceil(4).max(4), seed + k);
                    let b = self.buffer(vk::BufferUsageFlags::UNIFORM_BUFFER, &words, r)?;
                    buf_infos.push(vk::DescriptorBufferInfo {
                        buffer: b,
                        offset: 0,
                        range: vk::WHOLE_SIZE,
                    });
                }
                Desc::Storage => {
                    let words = uniform_words(16384, seed + k);
                    let b = self.buffer(vk::BufferUsageFlags::STORAGE_BUFFER, &words, r)?;
                    buf_infos.push(vk::DescriptorBufferInfo {
                        buffer: b,
                        offset: 0,
                        range: vk::WHOLE_SIZE,
                    });
                }
                Desc::Sampler => img_infos.push(vk::DescriptorImageInfo {
                    sampler: self.sampler(r)?,
                    ..Default::default()
                }),
                Desc::StorageImage {
                    dim,
                    arrayed,
                    format,
                } => {
                    let view = self.storage_image(*dim, *arrayed, *format, seed + k, r, uploads)?;
                    img_infos.push(vk::DescriptorImageInfo {
                        sampler: vk::Sampler::null(),
                        image_view: view,
                        image_layout: vk::ImageLayout::GENERAL,
                    });
                }
                Desc::CombinedImage { dim, arrayed } | Desc::SampledImage { dim, arrayed } => {
                    let view = self.texture(*dim, *arrayed, seed + k, r, uploads)?;
                    let sampler = if matches!(desc, Desc::CombinedImage { .. }) {
                        self.sampler(r)?
                    } else {
                        vk::Sampler::null()
                    };
                    img_infos.push(vk::DescriptorImageInfo {
                        sampler,
                        image_view: view,
                        image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
                    });
                }
            }
        }
        let mut w = vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(binding)
            .descriptor_type(ty);
        if buf_infos.is_empty() {
            w = w.image_info(&img_infos);
        } else {
            w = w.buffer_info(&buf_infos);
        }
        unsafe { d.update_descriptor_sets(&[w], &[]) };
        Ok(())
    }

    fn sampler(&self, r: &mut Resources) -> Result<vk::Sampler, String> {
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::LINEAR)
            .min_filter(vk::Filter::LINEAR)
            .address_mode_u(vk::SamplerAddressMode::REPEAT)
            .address_mode_v(vk::SamplerAddressMode::REPEAT)
            .address_mode_w(vk::SamplerAddressMode::REPEAT)
            .max_lod(0.0);
        let s = unsafe { self.device.create_sampler(&info, None) }.map_err(|e| e.to_string())?;
        r.samplers.push(s);
        Ok(s)
    }

    fn texture(
        &self,
        dim: rspirv::spirv::Dim,
        arrayed: bool,
        seed: u32,
        r: &mut Resources,
        uploads: &mut Vec<Upload>,
    ) -> Result<vk::ImageView, String> {
        let shape = ImageShape {
            dim,
            arrayed,
            size: 8,
            format: vk::Format::R8G8B8A8_UNORM,
            storage: false,
        };
        self.uploaded_image(&shape, |n| pattern(seed * 77, n), r, uploads)
    }

    /// A storage image of one of the formats image atomics take (32-bit integer
    /// or float texels), as large as the framebuffer so that a fragment can address
    /// its own texel; float texels start in [1, 2) (no NaN to compare).
    fn storage_image(
        &self,
        dim: rspirv::spirv::Dim,
        arrayed: bool,
        format: rspirv::spirv::ImageFormat,
        seed: u32,
        r: &mut Resources,
        uploads: &mut Vec<Upload>,
    ) -> Result<vk::ImageView, String> {
        use rspirv::spirv::ImageFormat;
        let (vk_format, float) = match format {
            ImageFormat::R32ui => (vk::Format::R32_UINT, false),
            ImageFormat::R32i => (vk::Format::R32_SINT, false),
            ImageFormat::R32f => (vk::Format::R32_SFLOAT, true),
            other => return Err(format!("unsupported storage image format {other:?}")),
        };
        let shape = ImageShape {
            dim,
            arrayed,
            size: SIZE,
            format: vk_format,
            storage: true,
        };
        let texels = |n| {
            let words = pattern(seed * 131, n);
            match float {
                true => words.iter().map(|w| 0x3f80_0000 | (w >> 9)).collect(),
                false => words,
            }
        };
        self.uploaded_image(&shape, texels, r, uploads)
    }

    /// An image of `shape` filled with `texels(count)` (one word per texel) by an
    /// upload recorded before the draw, and its view.
    fn uploaded_image(
        &self,
        shape: &ImageShape,
        texels: impl Fn(usize) -> Vec<u32>,
        r: &mut Resources,
        uploads: &mut Vec<Upload>,
    ) -> Result<vk::ImageView, String> {
        use rspirv::spirv::Dim;
        let (s, dim, arrayed) = (shape.size, shape.dim, shape.arrayed);
        let (ty, vty, extent, layers, flags) = match (dim, arrayed) {
            (Dim::Dim2D, false) => (
                vk::ImageType::TYPE_2D,
                vk::ImageViewType::TYPE_2D,
                vk::Extent3D {
                    width: s,
                    height: s,
                    depth: 1,
                },
                1,
                vk::ImageCreateFlags::empty(),
            ),
            (Dim::Dim2D, true) => (
                vk::ImageType::TYPE_2D,
                vk::ImageViewType::TYPE_2D_ARRAY,
                vk::Extent3D {
                    width: s,
                    height: s,
                    depth: 1,
                },
                2,
                vk::ImageCreateFlags::empty(),
            ),
            (Dim::DimCube, false) => (
                vk::ImageType::TYPE_2D,
                vk::ImageViewType::CUBE,
                vk::Extent3D {
                    width: s,
                    height: s,
                    depth: 1,
                },
                6,
                vk::ImageCreateFlags::CUBE_COMPATIBLE,
            ),
            (Dim::Dim3D, false) => (
                vk::ImageType::TYPE_3D,
                vk::ImageViewType::TYPE_3D,
                vk::Extent3D {
                    width: s,
                    height: s,
                    depth: s,
                },
                1,
                vk::ImageCreateFlags::empty(),
            ),
            (other, a) => {
                return Err(format!(
                    "unsupported image dimension {other:?} (arrayed {a})"
                ))
            }
        };
        let format = shape.format;
        let usage = match shape.storage {
            true => vk::ImageUsageFlags::STORAGE,
            false => vk::ImageUsageFlags::SAMPLED,
        };
        let (img, _) = self.image(
            format,
            usage | vk::ImageUsageFlags::TRANSFER_DST,
            extent,
            layers,
            ty,
            flags,
            r,
        )?;
        let count = (extent.width * extent.height * extent.depth * layers) as usize;
        let staging = self.buffer(vk::BufferUsageFlags::TRANSFER_SRC, &texels(count), r)?;
        uploads.push(Upload {
            image: img,
            staging,
            extent,
            layers,
            storage: shape.storage,
        });
        let vi = vk::ImageViewCreateInfo::default()
            .image(img)
            .view_type(vty)
            .format(format)
            .subresource_range(color_range(layers));
        let v = unsafe { self.device.create_image_view(&vi, None) }.map_err(|e| e.to_string())?;
        r.views.push(v);
        Ok(v)
    }
}

fn color_range(layers: u32) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: layers,
    }
}

fn desc_type(d: &Desc) -> vk::DescriptorType {
    match d {
        Desc::Uniform { .. } => vk::DescriptorType::UNIFORM_BUFFER,
        Desc::Storage => vk::DescriptorType::STORAGE_BUFFER,
        Desc::CombinedImage { .. } => vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        Desc::SampledImage { .. } => vk::DescriptorType::SAMPLED_IMAGE,
        Desc::StorageImage { .. } => vk::DescriptorType::STORAGE_IMAGE,
        Desc::Sampler => vk::DescriptorType::SAMPLER,
    }
}

/// Number of vertices drawn.
pub const VERTICES: u32 = 48;

/// Vertex data for one attribute location, four scalars per vertex: floats in
/// [-0.9, 0.9] (w = 1, z in [0.1, 0.9]) or small integers 0..3 (safe as array
/// indices); 64-bit scalars (`bits` 64) are the same values as doubles or 64-bit
/// integers, low word first.
fn attribute_words(loc: u32, kind: Kind, bits: u32) -> Vec<u32> {
    let noise = pattern(1000 + loc, (VERTICES * 4) as usize);
    let values = (0..(VERTICES * 4) as usize).map(|i| match kind {
        Kind::Float => {
            let unit = (noise[i] % 10000) as f32 / 10000.0;
            let v = match i % 4 {
                2 => 0.1 + 0.8 * unit,
                3 => 1.0,
                _ => -0.9 + 1.8 * unit,
            };
            (v.to_bits(), f64::from(v).to_bits())
        }
        _ => (noise[i] % 4, u64::from(noise[i] % 4)),
    });
    match bits {
        64 => values
            .flat_map(|(_, w)| [w as u32, (w >> 32) as u32])
            .collect(),
        _ => values.map(|(w, _)| w).collect(),
    }
}

/// The vertex attribute format of an input: four 32-bit scalars, or as many
/// 64-bit scalars as the shader reads (a 64-bit format feeds exactly the
/// input's components).
fn attribute_format(kind: Kind, n: u32, bits: u32) -> vk::Format {
    use vk::Format as F;
    match (bits, kind, n) {
        (64, Kind::Float, 1) => F::R64_SFLOAT,
        (64, Kind::Float, 2) => F::R64G64_SFLOAT,
        (64, Kind::Float, 3) => F::R64G64B64_SFLOAT,
        (64, Kind::Float, _) => F::R64G64B64A64_SFLOAT,
        (64, Kind::Sint, 1) => F::R64_SINT,
        (64, Kind::Sint, 2) => F::R64G64_SINT,
        (64, Kind::Sint, 3) => F::R64G64B64_SINT,
        (64, Kind::Sint, _) => F::R64G64B64A64_SINT,
        (64, Kind::Uint, 1) => F::R64_UINT,
        (64, Kind::Uint, 2) => F::R64G64_UINT,
        (64, Kind::Uint, 3) => F::R64G64B64_UINT,
        (64, Kind::Uint, _) => F::R64G64B64A64_UINT,
        _ => attachment_format(kind),
    }
}

impl Gpu {
    fn render_in(
        &self,
        stages: &Stages,
        setup: &Setup,
        r: &mut Resources,
    ) -> Result<Vec<Attachment>, String> {
        let d = &self.device;
        let mut uploads = vec![];
        let (set_layouts, sets) = self.descriptors(setup, r, &mut uploads)?;
        let push = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::ALL_GRAPHICS,
            offset: 0,
            size: setup.push_size.div_ceil(4) * 4,
        }];
        let mut pli = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
        if setup.push_size > 0 {
            pli = pli.push_constant_ranges(&push);
        }
        let layout = unsafe { d.create_pipeline_layout(&pli, None) }.map_err(|e| e.to_string())?;
        r.layouts.push(layout);
        // Colour attachments, dense up to the highest location.
        let count = setup.outputs.keys().map(|l| l + 1).max().unwrap_or(0);
        let extent = vk::Extent3D {
            width: SIZE,
            height: SIZE,
            depth: 1,
        };
        let mut atts = vec![];
        let mut refs = vec![];
        let mut targets = vec![];
        for loc in 0..count {
            match setup.outputs.get(&loc) {
                Some((kind, _)) => {
                    let format = attachment_format(*kind);
                    let (img, _) = self.image(
                        format,
                        vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
                        extent,
                        1,
                        vk::ImageType::TYPE_2D,
                        vk::ImageCreateFlags::empty(),
                        r,
                    )?;
                    let vi = vk::ImageViewCreateInfo::default()
                        .image(img)
                        .view_type(vk::ImageViewType::TYPE_2D)
                        .format(format)
                        .subresource_range(color_range(1));
                    let view =
                        unsafe { d.create_image_view(&vi, None) }.map_err(|e| e.to_string())?;
                    r.views.push(view);
                    refs.push(vk::AttachmentReference {
                        attachment: atts.len() as u32,
                        layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
                    });
                    atts.push(vk::AttachmentDescription {
                        format,
                        samples: vk::SampleCountFlags::TYPE_1,
                        load_op: vk::AttachmentLoadOp::CLEAR,
                        store_op: vk::AttachmentStoreOp::STORE,
                        stencil_load_op: vk::AttachmentLoadOp::DONT_CARE,
                        stencil_store_op: vk::AttachmentStoreOp::DONT_CARE,
                        initial_layout: vk::ImageLayout::UNDEFINED,
                        final_layout: vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                        ..Default::default()
                    });
                    targets.push((loc, *kind, img, view));
                }
                None => refs.push(vk::AttachmentReference {
                    attachment: vk::ATTACHMENT_UNUSED,
                    layout: vk::ImageLayout::UNDEFINED,
                }),
            }
        }
        let subpass = [vk::SubpassDescription::default()
            .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
            .color_attachments(&refs)];
        let rpi = vk::RenderPassCreateInfo::default()
            .attachments(&atts)
            .subpasses(&subpass);
        let pass = unsafe { d.create_render_pass(&rpi, None) }.map_err(|e| e.to_string())?;
        r.passes.push(pass);
        let views: Vec<vk::ImageView> = targets.iter().map(|t| t.3).collect();
        let fbi = vk::FramebufferCreateInfo::default()
            .render_pass(pass)
            .attachments(&views)
            .width(SIZE)
            .height(SIZE)
            .layers(1);
        let fb = unsafe { d.create_framebuffer(&fbi, None) }.map_err(|e| e.to_string())?;
        r.framebuffers.push(fb);
        let pipeline = self.pipeline(stages, setup, layout, pass, count, r)?;
        // Vertex buffers, one per attribute location.
        let mut vbufs = vec![];
        for (loc, (kind, _)) in &setup.inputs {
            let bits = setup.input_bits.get(loc).copied().unwrap_or(32);
            vbufs.push(self.buffer(
                vk::BufferUsageFlags::VERTEX_BUFFER,
                &attribute_words(*loc, *kind, bits),
                r,
            )?);
        }
        let captures = self.capture_buffers(setup, r)?;
        self.check_vertex_formats(setup)?;
        // Read-back buffers.
        let mut reads = vec![];
        for _ in &targets {
            let words = vec![0u32; (SIZE * SIZE * 4) as usize];
            let b = self.buffer(vk::BufferUsageFlags::TRANSFER_DST, &words, r)?;
            reads.push((b, *r.memory.last().ok_or("no memory")?));
        }
        let cpi = vk::CommandPoolCreateInfo::default().queue_family_index(self.qfi);
        let cpool = unsafe { d.create_command_pool(&cpi, None) }.map_err(|e| e.to_string())?;
        r.cmd_pools.push(cpool);
        let cai = vk::CommandBufferAllocateInfo::default()
            .command_pool(cpool)
            .command_buffer_count(1)
            .level(vk::CommandBufferLevel::PRIMARY);
        let cb = unsafe { d.allocate_command_buffers(&cai) }.map_err(|e| e.to_string())?[0];
        unsafe {
            d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
                .map_err(|e| e.to_string())?;
            for u in &uploads {
                self.record_upload(cb, u);
            }
            let clears: Vec<vk::ClearValue> = targets
                .iter()
                .map(|_| vk::ClearValue {
                    color: vk::ClearColorValue { uint32: [0; 4] },
                })
                .collect();
            let rbi = vk::RenderPassBeginInfo::default()
                .render_pass(pass)
                .framebuffer(fb)
                .render_area(vk::Rect2D {
                    offset: vk::Offset2D::default(),
                    extent: vk::Extent2D {
                        width: SIZE,
                        height: SIZE,
                    },
                })
                .clear_values(&clears);
            d.cmd_begin_render_pass(cb, &rbi, vk::SubpassContents::INLINE);
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, pipeline);
            if !sets.is_empty() {
                d.cmd_bind_descriptor_sets(
                    cb,
                    vk::PipelineBindPoint::GRAPHICS,
                    layout,
                    0,
                    &sets,
                    &[],
                );
            }
            if setup.push_size > 0 {
                let words = uniform_words(setup.push_size.div_ceil(4) as usize, 99);
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                d.cmd_push_constants(cb, layout, vk::ShaderStageFlags::ALL_GRAPHICS, 0, &bytes);
            }
            if !vbufs.is_empty() {
                let offsets = vec![0u64; vbufs.len()];
                d.cmd_bind_vertex_buffers(cb, 0, &vbufs, &offsets);
            }
            self.draw_capturing(cb, &captures);
            d.cmd_end_render_pass(cb);
            self.captures_to_host(cb, &captures);
            for ((_, _, img, _), (buf, _)) in targets.iter().zip(&reads) {
                let region = vk::BufferImageCopy {
                    image_subresource: vk::ImageSubresourceLayers {
                        aspect_mask: vk::ImageAspectFlags::COLOR,
                        mip_level: 0,
                        base_array_layer: 0,
                        layer_count: 1,
                    },
                    image_extent: extent,
                    ..Default::default()
                };
                d.cmd_copy_image_to_buffer(
                    cb,
                    *img,
                    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                    *buf,
                    &[region],
                );
            }
            d.end_command_buffer(cb).map_err(|e| e.to_string())?;
            let fence = d
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .map_err(|e| e.to_string())?;
            r.fences.push(fence);
            let cbs = [cb];
            let si = [vk::SubmitInfo::default().command_buffers(&cbs)];
            d.queue_submit(self.queue, &si, fence)
                .map_err(|e| e.to_string())?;
            d.wait_for_fences(&[fence], true, u64::MAX)
                .map_err(|e| e.to_string())?;
        }
        let mut out = vec![];
        for ((loc, kind, _, _), (_, mem)) in targets.iter().zip(&reads) {
            out.push(Attachment {
                location: *loc,
                kind: *kind,
                words: self.read(*mem, (SIZE * SIZE * 4) as usize)?,
                capture: None,
            });
        }
        for (b, c) in &captures {
            let words = (c.stride / 4 * XFB_RECORDS) as usize;
            out.push(Attachment {
                location: *b,
                kind: Kind::Uint,
                words: self.read(c.memory, words)?,
                capture: Some(c.words.clone()),
            });
        }
        Ok(out)
    }

    /// An error naming the first attribute whose format the driver cannot read
    /// from a vertex buffer (lavapipe of Mesa 22.3.6 reads none of the 64-bit
    /// formats, 25.0.7 only the integer ones, and drawing with one anyway feeds
    /// zeros), rather than a draw whose comparison would be vacuous.
    fn check_vertex_formats(&self, setup: &Setup) -> Result<(), String> {
        for (loc, (kind, n)) in &setup.inputs {
            let bits = setup.input_bits.get(loc).copied().unwrap_or(32);
            let f = attribute_format(*kind, *n, bits);
            if !self.vertex_format(f) {
                return Err(format!(
                    "the driver cannot read the {bits}-bit vertex attribute at location {loc} \
                     (format {} has no VERTEX_BUFFER support)",
                    f.as_raw()
                ));
            }
        }
        Ok(())
    }

    /// One buffer per transform feedback binding up to the highest `setup`
    /// captures to, each [`XFB_RECORDS`] records of its stride filled with
    /// [`XFB_FILL`] (a binding nothing captures to gets a small one).
    fn capture_buffers(
        &self,
        setup: &Setup,
        r: &mut Resources,
    ) -> Result<BTreeMap<u32, Capture>, String> {
        let mut out = BTreeMap::new();
        let Some(last) = setup.xfb.keys().max() else {
            return Ok(out);
        };
        if self.xfb.is_none() {
            return Err("the pipeline captures, but the driver has no transform feedback".into());
        }
        for b in 0..=*last {
            let (stride, words) = match setup.xfb.get(&b) {
                Some(x) => {
                    let stride = x.stride.max(4).div_ceil(4) * 4;
                    let kinds = (0..stride / 4).map(|w| x.words.get(&w).copied()).collect();
                    (stride, kinds)
                }
                None => (4, vec![None]),
            };
            let fill = vec![XFB_FILL; (stride / 4 * XFB_RECORDS) as usize];
            let buffer = self.buffer(
                vk::BufferUsageFlags::TRANSFORM_FEEDBACK_BUFFER_EXT,
                &fill,
                r,
            )?;
            let memory = *r.memory.last().ok_or("no memory")?;
            out.insert(
                b,
                Capture {
                    buffer,
                    memory,
                    stride,
                    words,
                },
            );
        }
        Ok(out)
    }

    /// The draw, with transform feedback into `captures` around it when any.
    unsafe fn draw_capturing(&self, cb: vk::CommandBuffer, captures: &BTreeMap<u32, Capture>) {
        let d = &self.device;
        let xfb = match &self.xfb {
            Some(x) if !captures.is_empty() => x.fp(),
            _ => {
                d.cmd_draw(cb, VERTICES, 1, 0, 0);
                return;
            }
        };
        let buffers: Vec<vk::Buffer> = captures.values().map(|c| c.buffer).collect();
        let offsets = vec![0u64; buffers.len()];
        let sizes: Vec<u64> = captures
            .values()
            .map(|c| u64::from(c.stride * XFB_RECORDS))
            .collect();
        let n = buffers.len() as u32;
        (xfb.cmd_bind_transform_feedback_buffers_ext)(
            cb,
            0,
            n,
            buffers.as_ptr(),
            offsets.as_ptr(),
            sizes.as_ptr(),
        );
        (xfb.cmd_begin_transform_feedback_ext)(cb, 0, 0, std::ptr::null(), std::ptr::null());
        d.cmd_draw(cb, VERTICES, 1, 0, 0);
        (xfb.cmd_end_transform_feedback_ext)(cb, 0, 0, std::ptr::null(), std::ptr::null());
    }

    /// Makes the captured records visible to the host.
    unsafe fn captures_to_host(&self, cb: vk::CommandBuffer, captures: &BTreeMap<u32, Capture>) {
        if captures.is_empty() {
            return;
        }
        let barrier = [vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFORM_FEEDBACK_WRITE_EXT)
            .dst_access_mask(vk::AccessFlags::HOST_READ)];
        self.device.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::TRANSFORM_FEEDBACK_EXT,
            vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &barrier,
            &[],
            &[],
        );
    }

    unsafe fn record_upload(&self, cb: vk::CommandBuffer, u: &Upload) {
        let d = &self.device;
        let barrier = |old, new, src, dst| {
            vk::ImageMemoryBarrier::default()
                .old_layout(old)
                .new_layout(new)
                .src_access_mask(src)
                .dst_access_mask(dst)
                .image(u.image)
                .subresource_range(color_range(u.layers))
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        };
        let b1 = [barrier(
            vk::ImageLayout::UNDEFINED,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            vk::AccessFlags::empty(),
            vk::AccessFlags::TRANSFER_WRITE,
        )];
        d.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::TOP_OF_PIPE,
            vk::PipelineStageFlags::TRANSFER,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &b1,
        );
        let region = vk::BufferImageCopy {
            image_subresource: vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: u.layers,
            },
            image_extent: u.extent,
            ..Default::default()
        };
        d.cmd_copy_buffer_to_image(
            cb,
            u.staging,
            u.image,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            &[region],
        );
        let (layout, access) = match u.storage {
            true => (
                vk::ImageLayout::GENERAL,
                vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
            ),
            false => (
                vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
                vk::AccessFlags::SHADER_READ,
            ),
        };
        let b2 = [barrier(
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            layout,
            vk::AccessFlags::TRANSFER_WRITE,
            access,
        )];
        d.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::ALL_GRAPHICS,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &b2,
        );
    }

    fn pipeline(
        &self,
        stages: &Stages,
        setup: &Setup,
        layout: vk::PipelineLayout,
        pass: vk::RenderPass,
        count: u32,
        r: &mut Resources,
    ) -> Result<vk::Pipeline, String> {
        let d = &self.device;
        let name = c"main";
        let mut infos = vec![];
        for (stage, words) in stages.all() {
            let mi = vk::ShaderModuleCreateInfo::default().code(words);
            let m = unsafe { d.create_shader_module(&mi, None) }.map_err(|e| e.to_string())?;
            r.modules.push(m);
            let entry = entry_name(words).unwrap_or_else(|| name.to_owned());
            infos.push((stage, m, entry));
        }
        let stage_infos: Vec<vk::PipelineShaderStageCreateInfo> = infos
            .iter()
            .map(|(s, m, n)| {
                vk::PipelineShaderStageCreateInfo::default()
                    .stage(*s)
                    .module(*m)
                    .name(n.as_c_str())
            })
            .collect();
        let (binds, attrs): (Vec<_>, Vec<_>) = setup
            .inputs
            .iter()
            .enumerate()
            .map(|(i, (loc, (kind, n)))| {
                let bits = setup.input_bits.get(loc).copied().unwrap_or(32);
                (
                    vk::VertexInputBindingDescription {
                        binding: i as u32,
                        stride: bits / 2,
                        input_rate: vk::VertexInputRate::VERTEX,
                    },
                    vk::VertexInputAttributeDescription {
                        location: *loc,
                        binding: i as u32,
                        format: attribute_format(*kind, *n, bits),
                        offset: 0,
                    },
                )
            })
            .unzip();
        let vi = vk::PipelineVertexInputStateCreateInfo::default()
            .vertex_binding_descriptions(&binds)
            .vertex_attribute_descriptions(&attrs);
        let ia = vk::PipelineInputAssemblyStateCreateInfo::default().topology(setup.topology);
        let ts = vk::PipelineTessellationStateCreateInfo::default()
            .patch_control_points(setup.patch_vertices);
        let viewports = [vk::Viewport {
            x: 0.0,
            y: 0.0,
            width: SIZE as f32,
            height: SIZE as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        }];
        let scissors = [vk::Rect2D {
            offset: vk::Offset2D::default(),
            extent: vk::Extent2D {
                width: SIZE,
                height: SIZE,
            },
        }];
        let vp = vk::PipelineViewportStateCreateInfo::default()
            .viewports(&viewports)
            .scissors(&scissors);
        let rs = vk::PipelineRasterizationStateCreateInfo::default()
            .polygon_mode(vk::PolygonMode::FILL)
            .cull_mode(vk::CullModeFlags::NONE)
            .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
            .line_width(1.0);
        let ms = vk::PipelineMultisampleStateCreateInfo::default()
            .rasterization_samples(vk::SampleCountFlags::TYPE_1);
        let blend: Vec<vk::PipelineColorBlendAttachmentState> = (0..count)
            .map(|_| vk::PipelineColorBlendAttachmentState {
                color_write_mask: vk::ColorComponentFlags::RGBA,
                ..Default::default()
            })
            .collect();
        let cb = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend);
        let mut gpi = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stage_infos)
            .vertex_input_state(&vi)
            .input_assembly_state(&ia)
            .viewport_state(&vp)
            .rasterization_state(&rs)
            .multisample_state(&ms)
            .color_blend_state(&cb)
            .layout(layout)
            .render_pass(pass);
        if stages.tesc.is_some() {
            gpi = gpi.tessellation_state(&ts);
        }
        let p = unsafe { d.create_graphics_pipelines(vk::PipelineCache::null(), &[gpi], None) }
            .map_err(|(_, e)| format!("vkCreateGraphicsPipelines: {e}"))?[0];
        r.pipelines.push(p);
        Ok(p)
    }
}

fn entry_name(words: &[u32]) -> Option<std::ffi::CString> {
    let m = rspirv::dr::load_words(words).ok()?;
    match m.entry_points.first()?.operands.get(2)? {
        rspirv::dr::Operand::LiteralString(s) => std::ffi::CString::new(s.clone()).ok(),
        _ => None,
    }
}

/// How many channels (words of a transform feedback buffer) of two attachments
/// disagree, and a description of the first: integer attachments must agree bit
/// for bit, float ones within [`ULP_TOLERANCE`] units in the last place or
/// [`ABS_TOLERANCE`] (or both NaN); a capture compares each word as its record
/// layout says (32-bit floats so, 16-bit floats within [`F16_ULP_TOLERANCE`] or
/// [`ABS_TOLERANCE`], everything else and uncaptured words bit for bit).
pub fn compare(a: &Attachment, b: &Attachment) -> (usize, String) {
    let what = match a.capture {
        Some(_) => format!("xfb buffer {}", a.location),
        None => format!("location {}", a.location),
    };
    if a.words.len() != b.words.len() || a.capture.is_some() != b.capture.is_some() {
        return (
            1,
            format!("{what}: the two are not the same kind of target or size"),
        );
    }
    let mut bad = 0;
    let mut first = None;
    for (i, (x, y)) in a.words.iter().zip(&b.words).enumerate() {
        let ok = match word_kind(a, i) {
            Word::F32 => float_close(*x, *y),
            Word::F16 => {
                half_close(*x as u16, *y as u16) && half_close((*x >> 16) as u16, (*y >> 16) as u16)
            }
            Word::Exact => x == y,
        };
        if !ok {
            bad += 1;
            first.get_or_insert((i, *x, *y));
        }
    }
    let Some((i, x, y)) = first else {
        return (0, String::new());
    };
    let n = a.words.len();
    let place = match &a.capture {
        Some(c) => format!("record {} byte {}", i / c.len(), 4 * (i % c.len())),
        None => format!("pixel {} channel {}", i / 4, i % 4),
    };
    let (fx, fy) = (f32::from_bits(x), f32::from_bits(y));
    let msg = format!(
        "{what}: {bad} of {n} words differ; first at {place}: {fx:e} ({x:#x}) vs {fy:e} ({y:#x})"
    );
    (bad, msg)
}

/// How word `i` of `a` compares.
fn word_kind(a: &Attachment, i: usize) -> Word {
    match (&a.capture, a.kind) {
        (Some(c), _) => c[i % c.len()].unwrap_or(Word::Exact),
        (None, Kind::Float) => Word::F32,
        (None, _) => Word::Exact,
    }
}

/// Captured 16-bit floats may differ by this many units in their last place: a
/// 16-bit result narrowed from values within [`ULP_TOLERANCE`] of each other
/// rounds to the same half or its neighbour; one more step is allowed for 16-bit
/// arithmetic re-associated by the optimizer.
pub const F16_ULP_TOLERANCE: u32 = 2;

fn half_close(x: u16, y: u16) -> bool {
    let (fx, fy) = (half::f16::from_bits(x), half::f16::from_bits(y));
    if (fx.is_nan() && fy.is_nan()) || x == y || fx == fy {
        return true;
    }
    let ord = |b: u16| -> i32 {
        if b & 0x8000 != 0 {
            -i32::from(b & 0x7fff)
        } else {
            i32::from(b)
        }
    };
    (ord(x) - ord(y)).unsigned_abs() <= F16_ULP_TOLERANCE
        || (f32::from(fx) - f32::from(fy)).abs() <= ABS_TOLERANCE
}

/// Words of the transform feedback buffers that a capture wrote (that no longer
/// hold [`XFB_FILL`]): a test that checks captures must see some.
pub fn captured_words(atts: &[Attachment]) -> usize {
    atts.iter()
        .filter(|a| a.capture.is_some())
        .map(|a| a.words.iter().filter(|w| **w != XFB_FILL).count())
        .sum()
}

/// Float channels may differ by this many units in the last place: the importer
/// lowers GLSL built-ins (`normalize`, `reflect`, `length`, ...) to scalar ALU ops
/// that round differently from the driver's own implementation, and the
/// optimizer re-associates work across the interpolator. Integer attachments
/// must agree bit for bit.
pub const ULP_TOLERANCE: u32 = 128;

/// Or by this much absolutely: a coordinate that rounds differently can move a
/// bilinear sample of an 8-bit texture by up to one texel step (1/255); two
/// steps are allowed.
pub const ABS_TOLERANCE: f32 = 2.0 / 255.0;

fn float_close(x: u32, y: u32) -> bool {
    let (fx, fy) = (f32::from_bits(x), f32::from_bits(y));
    if fx.is_nan() && fy.is_nan() {
        return true;
    }
    if x == y || fx == fy {
        return true;
    }
    let ord = |b: u32| -> i64 {
        if b & 0x8000_0000 != 0 {
            -((b & 0x7fff_ffff) as i64)
        } else {
            b as i64
        }
    };
    (ord(x) - ord(y)).unsigned_abs() <= ULP_TOLERANCE as u64 || (fx - fy).abs() <= ABS_TOLERANCE
}

/// Pixels (of attachment 0) any channel of which is not the clear value.
pub fn coverage(atts: &[Attachment]) -> usize {
    atts.first()
        .map(|a| {
            a.words
                .chunks(4)
                .filter(|p| p.iter().any(|w| *w != 0))
                .count()
        })
        .unwrap_or(0)
}
