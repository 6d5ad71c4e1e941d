#version 450
// Terrain splatting: height from a texture (vertex fetch), splat weights per vertex.
layout(location = 0) in vec2 a_xz;
layout(binding = 0) uniform Terrain { mat4 view_proj; vec4 scale; } t;
layout(binding = 1) uniform sampler2D heightmap;
out vec2 v_uv;
out vec4 v_weights;
out float v_height;
void main() {
    vec2 uv = a_xz * t.scale.xy;
    float h = textureLod(heightmap, uv, 0.0).r * t.scale.z;
    v_uv = uv;
    v_height = h;
    v_weights = vec4(clamp(1.0 - h, 0.0, 1.0), clamp(h, 0.0, 1.0), 0.0, 0.0);
    gl_Position = t.view_proj * vec4(a_xz.x, h, a_xz.y, 1.0);
}
